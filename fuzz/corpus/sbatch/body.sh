#!/usr/bin/env bash
#SBATCH --nodes=2 --ntasks-per-node=4
#SBATCH --array=0-9%2
#SBATCH --dependency=afterok:123
#SBATCH --output=logs/%x-%j.out --signal=USR1@90
set -euo pipefail
export NCCL_DEBUG=INFO
if [ "$SLURM_NODEID" -eq 0 ]; then
  python prepare.py
fi
cat > cfg.yaml <<EOF
lr: 3e-4
EOF
srun --label \
  python train.py --config cfg.yaml
#SBATCH --time=5
