ARGS -N 4 --time 10 --gpus-per-node=h100:4 -Jfinetune --export=A=1
#!/bin/bash
#SBATCH -N 2
srun hostname
