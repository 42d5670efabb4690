#!/usr/bin/env bash
# generate's tokens/s at 200, 1,000 and 3,000 tokens on the main job's Grassmann model (2 layers, d 64, adaptive head),
# before and after the decoding changes: OLD is a built checkout of the commit before them, this checkout the new side;
# ROUNDS rounds (default 5), old and new alternating within each length. top-k 40, seed 1, one thread, slide-keep 32.
# Usage: bash docs/benchmarks/sampling/generate.sh OLD_CHECKOUT RUN_DIR   (RUN_DIR: a `train` of the main job's
# Grassmann model, or the main job's runs/compare/grassmann; GRASSFLOW_DATA_DIR set). Writes generate.txt, or $OUT.
# OLD_CHECKOUT '-' times this checkout alone.
set -euo pipefail
old=$1 run=$2
out=${OUT:-docs/benchmarks/sampling/generate.txt}
: >"$out"
echo "# $(date -u '+%F %T') UTC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores" | tee -a "$out"
for round in $(seq 1 "${ROUNDS:-5}"); do
  for tokens in 200 1000 3000; do
    for side in $([ "$old" = - ] || echo "$old") .; do
      line=$(node "$side/apps/lm-trainer/dist/cli.js" generate --checkpoint "$run" --prompt 'the history of' \
        --max-tokens "$tokens" --top-k 40 --seed 1 2>&1 >/dev/null | grep -E '^generate:')
      name=$([ "$side" = . ] && echo new || echo old)
      echo "round $round $name: $line; load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out"
    done
  done
done
