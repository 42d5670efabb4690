#!/usr/bin/env bash
# Expressive attention's fused weights: training tokens/s of transformer-ea at the ladder's size S (4 pre-LN layers,
# d 64, L 128, B 16, the adaptive head, WikiText-2 ids), a build without the fused kernel (BEFORE: the repository root
# of a checkout of 40a9ec9, built) against this one, alternating order over ROUNDS rounds; then the kernel alone
# (bench/expressive.bench.ts). One JSON line per training run in expressive.jsonl. From the repository root, after
# `pnpm build`, GRASSFLOW_DATA_DIR set:   BEFORE=/path/to/checkout bash docs/benchmarks/native/expressive.sh
set -euo pipefail
out=docs/benchmarks/native/expressive.jsonl
: >"$out"
args=(--model transformer-ea --preset paper-6l --layers 4 --norm pre --d-model 64 --seq-len 128 --batch 16
  --head adaptive --ids wiki --steps 6 --warmup 2 --json)
for round in $(seq 1 "${ROUNDS:-2}"); do
  sides="before after"
  [ $((round % 2)) = 0 ] && sides="after before"
  for side in $sides; do
    dir=.
    [ "$side" = before ] && dir="$BEFORE"
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$(cd "$dir" && node apps/lm-trainer/dist/cli.js bench "${args[@]}" 2>/dev/null | grep '^{')
    echo "{\"round\":$round,\"side\":\"$side\",\"load\":$load,\"bench\":$line}" >>"$out"
    echo "round $round $side (load $load): $(echo "$line" | grep -o '"train_tokens_per_s":[0-9.]*')"
  done
done
(cd packages/gpu-layers && node --import tsx bench/expressive.bench.ts --steps 10 2>/dev/null)
