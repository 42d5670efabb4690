#!/usr/bin/env bash
# generate's tokens/s and the decoding step's kernels, before and after the gather, fused-kernel and decode-step
# changes: OLD is a built checkout of the commit before them, this checkout the new side; three rounds, alternating.
# Usage: bash docs/benchmarks/native/decode.sh OLD_CHECKOUT RUN_DIR   (GRASSFLOW_DATA_DIR set; RUN_DIR a train run of
# the main job's Grassmann model). Writes decode.txt, or $OUT.
set -euo pipefail
old=$1 run=$2
out=${OUT:-docs/benchmarks/native/decode.txt}
: >"$out"
cp docs/benchmarks/native/decode-kernels.mjs "$old/docs/benchmarks/native/decode-kernels.mjs"
for side in "$old" .; do
  echo "$side ($(git -C "$side" rev-parse --short HEAD)): $(node "$side/docs/benchmarks/native/decode-kernels.mjs" \
    "$run/checkpoints/best" 2>/dev/null | grep -E '^(kernels|ms)' | tr '\n' ' ')" | tee -a "$out"
done
for round in 1 2 3; do
  for side in "$old" .; do
    line=$(node "$side/apps/lm-trainer/dist/cli.js" generate --checkpoint "$run" --prompt 'the history of' \
      --max-tokens 600 --top-k 40 --seed 1 2>&1 >/dev/null | grep -E '^generate:')
    echo "round $round $(git -C "$side" rev-parse --short HEAD): $line; load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out"
  done
done
