#!/usr/bin/env bash
# Fused LayerNorm/GELU kernels and the lean decoding step: training tokens/s with GRASSFLOW_FUSED=off against on
# (small configuration, and the adaptive-head configuration of the third row), alternating order over two rounds; one
# JSON line per run in fused.jsonl. Run from the repository root after `pnpm build`, GRASSFLOW_DATA_DIR set:
#   bash docs/benchmarks/native/fused.sh
set -euo pipefail
out=docs/benchmarks/native/fused.jsonl
: >"$out"
small=(--d-model 128 --layers 4 --vocab 8192 --batch 32 --seq-len 128 --steps 5)
adaptive=(--d-model 128 --layers 4 --batch 32 --seq-len 128 --steps 5 --head adaptive)
for round in 1 2; do
  modes="off on"
  [ "$round" = 2 ] && modes="on off"
  for cfg in small adaptive; do
    for mode in $modes; do
      declare -n args=$cfg
      load=$(cut -d' ' -f1 /proc/loadavg)
      line=$(GRASSFLOW_FUSED=$mode node apps/lm-trainer/dist/cli.js bench "${args[@]}" --json 2>/dev/null | grep '^{')
      echo "{\"round\":$round,\"config\":\"$cfg\",\"fused\":\"$mode\",\"load\":$load,\"bench\":$line}" >>"$out"
      echo "round $round $cfg fused $mode (load $load): $(echo "$line" | grep -o '"train_tokens_per_s":[0-9.]*')"
    done
  done
done
