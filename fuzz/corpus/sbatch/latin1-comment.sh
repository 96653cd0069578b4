#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
# résultats dans /scratch
module load cuda
srun python train.py
