#!/usr/bin/env bash
# A Slurm batch job that validates GPU nodes: one task per node, each
# leaving its report in a shared folder under the node's name (the layout
# a fleet merge reads: one folder per node). An example: nothing in this
# project runs it, as there is no cluster here.
#
#   sbatch ci/slurm-batch.sh /nfs/aitk-reports          (aitk-validate on PATH of every node,
#                                                          e.g. from the .deb: cmake --workflow --preset package-deb)
#
# sbatch and srun options: https://slurm.schedmd.com/sbatch.html and
# https://slurm.schedmd.com/srun.html (SLURMD_NODENAME, "Name of the node
# running the task", is in srun's OUTPUT ENVIRONMENT VARIABLES).
#SBATCH --job-name=aitk-validate
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=1
#SBATCH --time=02:00:00
#SBATCH --output=aitk-validate-%j.out
set -euo pipefail

out=${1:?usage: sbatch ci/slurm-batch.sh SHARED_REPORT_FOLDER [aitk-validate options]}
shift
mkdir -p "$out"
# --kill-on-bad-exit=0: a node whose checks fail exits 1; the other nodes
# must still finish their reports. The job's exit status is then non-zero,
# which is the point of a validation job.
srun --kill-on-bad-exit=0 bash -c 'aitk-validate --output-dir "$0/$SLURMD_NODENAME" "${@:---standard}"' \
  "$out" "$@"
