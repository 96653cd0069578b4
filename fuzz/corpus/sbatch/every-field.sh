#!/bin/bash
#SBATCH -J llama -N 4 --gres=gpu:h100:8 -c 2 --mem=512G
#SBATCH --ntasks-per-node=8
#SBATCH --time=2-00:00:00 -p research -D /workspace
#SBATCH --export=A=true,B=32,C=null,D=,E=a:b,F=#x,G=yes
#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.05-py3
#SBATCH --container-mounts=ckpt:/mnt/ckpt
srun torchrun train.py
