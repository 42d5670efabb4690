#!/usr/bin/env bash
# The main job's training wall time (`compare`, no flags, into a scratch folder) in built checkouts given as
# arguments, each also with GRASSFLOW_NATIVE=off where its first word is "off:" (off:DIR); one after another, with this
# machine's own OpenBLAS setting. Prints one line a run (seconds, the three kinds' tokens/s and val PPL) and writes them
# with the CPU and the load to main-job.txt. From the repository root, GRASSFLOW_DATA_DIR set:
#   bash docs/benchmarks/native/main-job.sh ../before off:. .
set -euo pipefail
txt=docs/benchmarks/native/main-job.txt
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset}" | tee "$txt"
for arg in "$@"; do
  dir="${arg#off:}"
  native=auto
  [ "$dir" != "$arg" ] && native=off
  # this script's own output file does not count as a change
  commit="$(git -C "$dir" rev-parse --short HEAD)$(git -C "$dir" diff --quiet HEAD -- . ":!$txt" || echo -dirty)"
  out="$(mktemp -d)"
  load="$(cut -d' ' -f1 /proc/loadavg)"
  start=$(date +%s.%N)
  GRASSFLOW_NATIVE=$native node "$dir/apps/lm-trainer/dist/cli.js" compare --quiet --out "$out" >/dev/null 2>&1
  end=$(date +%s.%N)
  summary=$(node -e '
    const fs = require("fs"), path = require("path");
    const dir = process.argv[1];
    const rows = fs.readdirSync(dir).filter((k) => fs.existsSync(path.join(dir, k, "metrics.jsonl"))).sort().map((k) => {
      const lines = fs.readFileSync(path.join(dir, k, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const train = lines.filter((r) => r.type === "train" && typeof r.tokens_per_s === "number");
      const val = lines.filter((r) => r.type === "eval" && typeof r.val_ppl === "number").map((r) => r.val_ppl);
      const tps = train.length ? train[train.length - 1].tokens_per_s.toFixed(0) : "?";
      return `${k} ${tps} tok/s, best val ${val.length ? Math.min(...val).toFixed(2) : "?"}`;
    });
    console.log(rows.join("; "));
  ' "$out")
  echo "$dir ($commit, GRASSFLOW_NATIVE=$native): $(echo "$end - $start" | bc) s, load $load → $(cut -d' ' -f1 /proc/loadavg); $summary" | tee -a "$txt"
  rm -rf "$out"
done
