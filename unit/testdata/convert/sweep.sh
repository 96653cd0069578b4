#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=0-9%2
#SBATCH --dependency=afterok:123
#SBATCH -p gpu
#SBATCH --gpus-per-node=h100:1
#SBATCH --time=2:00:00
#SBATCH --signal=USR1@90
#SBATCH --output=logs/%x-%j.out

python sweep.py --trial "$SLURM_ARRAY_TASK_ID"
