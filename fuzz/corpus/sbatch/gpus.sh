#!/bin/sh
#SBATCH -G a100:16 -N 2 --cpus-per-gpu=4 --mem-per-gpu=40G
#SBATCH --gpus-per-task=1 --ntasks=16
#SBATCH -t 1:30:00
srun ./a.out
