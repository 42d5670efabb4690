#!/usr/bin/env bash
# Two built checkouts of grassflow timed against each other: `bench` at the three configurations of the
# against-PyTorch table (paper-6l B 8; d 128 × 4, V 8,192, B 32; d 128 × 4, V 30,522, adaptive head, B 32), the two
# checkouts alternating (A B, then B A, ...) so that both see the same load; OpenBLAS on SkylakeX kernels on both sides.
# Writes one JSON line a run, with the checkout's commit, to the file given third. Run from the repository root with
# GRASSFLOW_DATA_DIR set:   bash docs/benchmarks/native/checkouts-ab.sh ../before . out.jsonl [rounds] [steps]
set -euo pipefail
a="${1:?give the first built checkout}"
b="${2:?give the second built checkout}"
out="${3:?give the output file}"
rounds="${4:-3}"
steps="${5:-10}"
export OPENBLAS_CORETYPE=SkylakeX
unset OPENBLAS_L2_SIZE
: >"$out"
configs=(
  "paper-6l B 8|--preset paper-6l --batch 8 --seq-len 128"
  "d 128 x 4 V 8192 B 32|--d-model 128 --layers 4 --vocab 8192 --batch 32 --seq-len 128"
  "adaptive head B 32|--d-model 128 --layers 4 --batch 32 --seq-len 128 --head adaptive --ids wiki"
)
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
for round in $(seq "$rounds"); do
  order=("$a" "$b")
  [ $((round % 2)) = 0 ] && order=("$b" "$a")
  for c in "${configs[@]}"; do
    name="${c%%|*}"
    read -r -a flags <<<"${c#*|}"
    for dir in "${order[@]}"; do
      commit="$(git -C "$dir" rev-parse --short HEAD)$(git -C "$dir" diff --quiet HEAD || echo -dirty)"
      line=$(node "$dir/apps/lm-trainer/dist/cli.js" bench "${flags[@]}" --steps "$steps" --json 2>/dev/null | grep '^{')
      echo "{\"round\":$round,\"config\":\"$name\",\"checkout\":\"$dir\",\"commit\":\"$commit\",\"cpu\":\"$cpu\",\"bench\":$line}" >>"$out"
      echo "round $round, $name, $dir ($commit): $(echo "$line" | grep -o '"train_tokens_per_s":[0-9.]*')"
    done
  done
done
