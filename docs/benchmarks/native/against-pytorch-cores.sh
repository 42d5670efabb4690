#!/usr/bin/env bash
# The three configurations of the against-PyTorch table (paper-6l B 8; d 128 × 4, V 8,192, B 32; d 128 × 4, V 30,522,
# adaptive head, B 32), --rounds 2, with both sides on the OpenBLAS kernels given as the first argument (SkylakeX,
# Haswell…, or 'auto' for grassflow's own choice, which PyTorch then gets too). Writes against-pytorch-<core>.txt
# (the tables, the CPU and the load) and .jsonl. Run from the repository root after `pnpm build`, with
# GRASSFLOW_DATA_DIR set:   bash docs/benchmarks/native/against-pytorch-cores.sh SkylakeX
set -euo pipefail
core="${1:?give the OpenBLAS core: SkylakeX, Haswell, ... or auto}"
dir=docs/benchmarks/native
txt="$dir/against-pytorch-$core.txt"
jsonl="$dir/against-pytorch-$core.jsonl"
if [ "$core" = auto ]; then unset OPENBLAS_CORETYPE; else export OPENBLAS_CORETYPE="$core"; fi
unset OPENBLAS_L2_SIZE
{
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; commit $(git rev-parse --short HEAD)"
  echo "OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset}"
} >"$txt"
: >"$jsonl"
run() {
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$txt"
  node apps/lm-trainer/dist/cli.js bench --against pytorch --rounds 2 --steps 5 "$@" 2>/dev/null |
    tee -a "$txt" | grep '^{' >>"$jsonl"
  echo >>"$txt"
}
run --preset paper-6l --batch 8 --seq-len 128
run --d-model 128 --layers 4 --vocab 8192 --batch 32 --seq-len 128
run --d-model 128 --layers 4 --batch 32 --seq-len 128 --head adaptive --ids wiki
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$txt"
