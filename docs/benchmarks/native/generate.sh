#!/usr/bin/env bash
# generate's tokens/s on the main job's Grassmann checkpoint (2 layers, d 64), 200 tokens, top-k 40, before and after
# the sampling changes: OLD is a checkout of the commit before them (built), NEW this one; two rounds, alternating.
# Usage: bash docs/benchmarks/native/generate.sh OLD_CHECKOUT CHECKPOINT   (GRASSFLOW_DATA_DIR set). Writes generate.txt.
set -euo pipefail
old=$1 ckpt=$2
out=docs/benchmarks/native/generate.txt
: >"$out"
gen() { # label, checkout, extra flags
  local t0 t1 line
  t0=$(date +%s.%N)
  line=$(node "$2/apps/lm-trainer/dist/cli.js" generate --checkpoint "$ckpt" --prompt 'the history of' --max-tokens 200 \
    --top-k 40 --seed 1 "${@:3}" 2>&1 >/dev/null | grep -E '^generate:' || true)
  t1=$(date +%s.%N)
  echo "$1: process $(echo "$t1 - $t0" | bc) s; ${line:-no tokens/s line (before: generate did not print one)}; load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out"
}
for round in 1 2; do
  gen "round $round old (e2afc15)" "$old"
  gen "round $round new" .
  gen "round $round new, --slide-keep 64 (= maxLen, the old default)" . --slide-keep 64
  gen "round $round new, --threads 2" . --threads 2
done
