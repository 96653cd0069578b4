#!/bin/bash
#SBATCH --job-name="my job" --comment "a \"quoted\" word" # trailing
#SBATCH --chdir=/home/user/run --mail-user=a@b.c --mail-type=END
#SBATCH --container-image=docker://ghcr.io/x/y:1 --container-workdir=/w
python - <<'PY'
print("hi")
PY
