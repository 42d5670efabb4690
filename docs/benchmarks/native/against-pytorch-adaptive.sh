#!/usr/bin/env bash
# The third row of the native-speed issue: the adaptive head on both sides (grassflow's AdaptiveSoftmaxHead, PyTorch's
# nn.AdaptiveLogSoftmaxWithLoss; cutoffs 2,000 and 10,000, div_value 4), d 128, 4 layers, V 30,522 (WordPiece: the
# ids are wiki.train's, the targets frequency ranks), B 32, L 128, --rounds 2. Writes against-pytorch-adaptive.txt and
# .jsonl. Run from the repository root after `pnpm build`, with GRASSFLOW_DATA_DIR set:
#   bash docs/benchmarks/native/against-pytorch-adaptive.sh
set -euo pipefail
dir=docs/benchmarks/native
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$dir/against-pytorch-adaptive.txt"
node apps/lm-trainer/dist/cli.js bench --against pytorch --rounds 2 --steps 5 --d-model 128 --layers 4 --batch 32 \
  --seq-len 128 --head adaptive --ids wiki 2>/dev/null | tee -a "$dir/against-pytorch-adaptive.txt" |
  grep '^{' >"$dir/against-pytorch-adaptive.jsonl"
