#!/usr/bin/env bash
# OpenBLAS's idle-thread spin (OPENBLAS_THREAD_TIMEOUT: 2^N cycles before a thread sleeps; OpenBLAS's default 28,
# grassflow's 4), 2 + 2 threads, the small configuration, alternating over two rounds; JSON lines in spin.jsonl.
# Run from the repository root after `pnpm build`:  bash docs/benchmarks/native/spin.sh
set -euo pipefail
out=docs/benchmarks/native/spin.jsonl
: >"$out"
for round in 1 2; do
  order="28 4"
  [ "$round" = 2 ] && order="4 28"
  for t in $order; do
    line=$(OPENBLAS_THREAD_TIMEOUT=$t node apps/lm-trainer/dist/cli.js bench --d-model 128 --layers 4 --vocab 8192 \
      --batch 32 --seq-len 128 --steps 5 --json 2>/dev/null | grep '^{')
    echo "{\"round\":$round,\"openblas_thread_timeout\":$t,\"bench\":$line}" >>"$out"
    echo "round $round timeout $t: $(echo "$line" | grep -o '"train_tokens_per_s":[0-9.]*')"
  done
done
