#!/usr/bin/env bash
# XNNPACK's pool × OpenBLAS's pool on this machine's cores: each pair of thread counts, the small configuration
# (d 128, 4 layers, V 8,192, B 32, L 128), alternating order over two rounds; one JSON line per run in threads.jsonl.
# Run from the repository root after `pnpm build`:  bash docs/benchmarks/native/threads.sh
set -euo pipefail
out=docs/benchmarks/native/threads.jsonl
: >"$out"
for round in 1 2; do
  pairs="1:1 1:2 2:1 2:2"
  [ "$round" = 2 ] && pairs="2:2 2:1 1:2 1:1"
  for pair in $pairs; do
    x=${pair%:*} b=${pair#*:}
    line=$(GRASSFLOW_BLAS_THREADS=$b node apps/lm-trainer/dist/cli.js bench --d-model 128 --layers 4 --vocab 8192 \
      --batch 32 --seq-len 128 --steps 5 --threads "$x" --json 2>/dev/null | grep '^{')
    echo "{\"round\":$round,\"xnnpack_threads\":$x,\"blas_threads\":$b,\"bench\":$line}" >>"$out"
    echo "round $round xnnpack $x blas $b: $(echo "$line" | grep -o '"train_tokens_per_s":[0-9.]*')"
  done
done
