#SBATCH --nodes=2
#SBATCH --job-name=golden
set -euo pipefail
#SBATCH --time=01:00:00
  #SBATCH --partition=batch
srun hostname
