#!/usr/bin/env bash
# The native kernels' before/after: `bench --profile` at the three configurations of the against-PyTorch table
# (paper-6l B 8; d 128 × 4, V 8,192, B 32; d 128 × 4, V 30,522, adaptive head, B 32), each run first with
# GRASSFLOW_NATIVE=off (the JS kernels and composed tfjs ops) and then with the native kernels, back to back in one
# command so that both see the same load; OpenBLAS on the kernels given as the first argument (default SkylakeX).
# Prints a markdown table (tokens/s, CPU s/step, wall s/step, CPU ÷ wall, the largest kernels that are not products)
# and writes it with the CPU and the load to native-kernels-ab.txt. Run from the repository root after `pnpm build`,
# with GRASSFLOW_DATA_DIR set:   bash docs/benchmarks/native/native-kernels-ab.sh SkylakeX [steps]
set -euo pipefail
core="${1:-SkylakeX}"
steps="${2:-3}"
dir=docs/benchmarks/native
txt="$dir/native-kernels-ab.txt"
if [ "$core" = auto ]; then unset OPENBLAS_CORETYPE; else export OPENBLAS_CORETYPE="$core"; fi
unset OPENBLAS_L2_SIZE
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
{
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; commit $(git rev-parse --short HEAD)"
  echo "OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset}; $steps timed steps a run; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| configuration | kernels | tokens/s | CPU s/step | wall s/step | CPU ÷ wall | load | largest non-product kernels (ms/step) |"
  echo "|---|---|---:|---:|---:|---:|---|---|"
} | tee "$txt"
row() {
  local name="$1" native="$2"
  shift 2
  GRASSFLOW_NATIVE="$native" node apps/lm-trainer/dist/cli.js bench --profile --steps "$steps" "$@" --json 2>/dev/null |
    tail -1 >"$tmp/run.json"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const wall = r.phases_ms.step / 1000;
    const top = r.top_kernels.filter((k) => k.kind !== "matmul").slice(0, 5)
      .map((k) => `${k.name} ${k.ms.toFixed(0)}`).join(", ");
    const side = process.argv[3] === "off" ? "JS (GRASSFLOW_NATIVE=off)" : "native";
    console.log(`| ${process.argv[2]} | ${side} | ${r.train_tokens_per_s.toFixed(0)} | ${r.cpu_sec_per_step.toFixed(3)} | ` +
      `${wall.toFixed(3)} | ${(r.cpu_sec_per_step / wall).toFixed(2)} | ${r.loadavg_start} → ${r.loadavg_end} | ${top} |`);
  ' "$tmp/run.json" "$name" "$native" | tee -a "$txt"
}
for native in off auto; do row "paper-6l B 8" "$native" --preset paper-6l --batch 8 --seq-len 128; done
for native in off auto; do
  row "d 128 × 4, V 8,192, B 32" "$native" --d-model 128 --layers 4 --vocab 8192 --batch 32 --seq-len 128
done
for native in off auto; do
  row "d 128 × 4, V 30,522 adaptive, B 32" "$native" --d-model 128 --layers 4 --batch 32 --seq-len 128 \
    --head adaptive --ids wiki
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$txt"
