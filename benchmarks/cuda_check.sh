#!/usr/bin/env bash
# The GPU check of the CUDA kernels as one command on a CUDA machine: build the extension, run the CUDA ops against
# their PyTorch references, then the decode-GEMV bandwidth benchmark (benchmarks/cuda_bandwidth.py).
#   bash benchmarks/cuda_check.sh [out_dir [--explore]]    (PY=python3 by default: the interpreter that has CUDA torch)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-benchmarks/results}
mkdir -p "$out"
export PYTHONPATH=src PYTHONUNBUFFERED=1
PY=${PY:-python3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
t0=$(date +%s)
$PY -m methods.kernels.build || exit 1
echo "build: $(($(date +%s) - t0)) s"
$PY -m pytest -q -p no:cacheprovider tests/kernels/test_cuda_ops.py 2>&1 | tail -25
$PY benchmarks/cuda_bandwidth.py "$out/cuda_bandwidth_h200.json" "${@:2}"
