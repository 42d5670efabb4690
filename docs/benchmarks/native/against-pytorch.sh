#!/usr/bin/env bash
# grassflow (native products) against PyTorch 1.13 on the same two cores, both configurations of the native-speed
# issue, --rounds 2 (alternating which goes first; best of each compared). Writes against-pytorch.txt (the tables)
# and against-pytorch.jsonl (one comparison per line). Run from the repository root after `pnpm build`:
#   bash docs/benchmarks/native/against-pytorch.sh
set -euo pipefail
dir=docs/benchmarks/native
: >"$dir/against-pytorch.jsonl"
: >"$dir/against-pytorch.txt"
run() {
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/against-pytorch.txt"
  node apps/lm-trainer/dist/cli.js bench --against pytorch --rounds 2 --steps 5 "$@" 2>/dev/null |
    tee -a "$dir/against-pytorch.txt" | grep '^{' >>"$dir/against-pytorch.jsonl"
}
run --preset paper-6l --batch 8 --seq-len 128
run --d-model 128 --layers 4 --vocab 8192 --batch 32 --seq-len 128
