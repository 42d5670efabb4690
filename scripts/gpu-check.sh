#!/usr/bin/env bash
# gpu-check: grassflow on an NVIDIA GPU through WebGPU (Dawn's Node binding over Vulkan), from a copy of the built
# workspace: no installs, no network. It finds NVIDIA's Vulkan ICD, reports the Vulkan device the WebGPU adapter is
# (refusing a software one unless --allow-software), times `bench` of paper-6l Grassmann, DPA and EA on webgpu
# (tokens/s, s/step), trains for about two minutes (loss curve, report with charts), and writes everything into one
# folder with a summary.md.
#
#   scripts/gpu-check.sh [--out DIR] [--data-dir DIR] [--minutes M] [--allow-software] [--skip-train] [--quick]
#
#   --out DIR         output folder (default gpu-check-<UTC time>); must not exist or be empty
#   --data-dir DIR    WikiText-2 and the BERT vocabulary for training (default GRASSFLOW_DATA_DIR, else ../shared/data
#                     beside the workspace, else ~/.cache/grassflow)
#   --minutes M       length of the training run, from bench's s/step (default 2)
#   --allow-software  measure a software (fallback) adapter too, e.g. Mesa lavapipe; its numbers are labelled
#                     "software rendering" everywhere
#   --skip-train      bench only
#   --quick           tiny sizes and a few steps (the test suite runs this on lavapipe with --allow-software)
#
# GRASSFLOW_GPU_CHECK_CLI, when set, is the command that runs grassflow-lm instead of node apps/lm-trainer/dist/cli.js
# (the test suite runs the source: node --import tsx apps/lm-trainer/src/cli.ts).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out=""
data_dir="${GRASSFLOW_DATA_DIR:-}"
minutes=2
allow_software=0
skip_train=0
quick=0
die() {
  echo "gpu-check: $*" >&2
  exit 1
}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --data-dir) data_dir="${2:?--data-dir needs a folder}"; shift 2 ;;
    --minutes) minutes="${2:?--minutes needs a number}"; shift 2 ;;
    --allow-software) allow_software=1; shift ;;
    --skip-train) skip_train=1; shift ;;
    --quick) quick=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--minutes must be a positive number, got '$minutes'"
out="${out:-gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}"
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then die "the output folder $out exists and is not empty: give a new --out"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cli=(node "$root/apps/lm-trainer/dist/cli.js")
if [ -n "${GRASSFLOW_GPU_CHECK_CLI:-}" ]; then read -r -a cli <<<"$GRASSFLOW_GPU_CHECK_CLI"; fi
say() { echo "gpu-check: $*" >&2; }

# --- The built workspace and Node -------------------------------------------------------------------------------
command -v node >/dev/null || die "node is not on PATH: bring Node.js 20 along (a copy of its folder will do) and put its bin/ on PATH"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old: grassflow needs Node.js >= 20"
for f in apps/lm-trainer/dist/cli.js packages/gpu-layers/dist/index.js; do
  if [ "$f" = apps/lm-trainer/dist/cli.js ] && [ -n "${GRASSFLOW_GPU_CHECK_CLI:-}" ]; then continue; fi
  [ -e "$root/$f" ] || die "$root/$f is missing: build the workspace where it can install (pnpm install && pnpm build), then copy the whole folder, node_modules included"
done
[ -e "$root/packages/gpu-layers/node_modules/webgpu/package.json" ] ||
  die "the npm package webgpu (Dawn's Node binding) is not in packages/gpu-layers/node_modules: install the workspace with it (pnpm install; see the README) before copying it"

# --- The Vulkan loader and NVIDIA's ICD -------------------------------------------------------------------------
has_vulkan_loader() {
  local d
  case "$(ldconfig -p 2>/dev/null || true)" in *libvulkan.so.1*) return 0 ;; esac
  IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /lib/x86_64-linux-gnu; do
    if [ -n "$d" ] && [ -e "$d/libvulkan.so.1" ]; then return 0; fi
  done
  return 1
}
has_vulkan_loader ||
  die "the Vulkan loader libvulkan.so.1 is missing: install it (Debian/Ubuntu: apt-get install libvulkan1), or bring the library along and point LD_LIBRARY_PATH at its folder"
icd_dirs=(/usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d)
icd_env="${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-}}"
nvidia_icd=""
if [ -n "$icd_env" ]; then
  IFS=: read -r -a listed <<<"$icd_env"
  for f in "${listed[@]}"; do
    [ -e "$f" ] || die "VK_ICD_FILENAMES/VK_DRIVER_FILES names $f, which does not exist"
    case "$(basename "$f")" in *nvidia*) nvidia_icd="$f" ;; esac
  done
  icd_note="from the environment: $icd_env"
else
  for d in "${icd_dirs[@]}"; do
    for f in "$d"/nvidia*.json; do
      if [ -e "$f" ] && [ -z "$nvidia_icd" ]; then nvidia_icd="$f"; fi
    done
  done
  if [ -n "$nvidia_icd" ]; then
    # Only NVIDIA's driver, so that Dawn cannot fall back to a software one (and its ICD may lie outside the
    # loader's default folders, as in containers: /usr/local/nvidia/share/vulkan/icd.d).
    export VK_ICD_FILENAMES="$nvidia_icd" VK_DRIVER_FILES="$nvidia_icd"
    icd_note="$nvidia_icd (VK_ICD_FILENAMES set to it)"
  else
    icd_note="no NVIDIA ICD; the loader's default search (${icd_dirs[*]})"
  fi
fi
if [ -z "$nvidia_icd" ]; then
  msg="no NVIDIA Vulkan ICD JSON (nvidia_icd.json) found (looked in ${VK_ICD_FILENAMES:+VK_ICD_FILENAMES, }${icd_dirs[*]}). It comes with the NVIDIA driver's Vulkan part: Ubuntu libnvidia-gl-<driver version>, Debian nvidia-vulkan-icd, or NVIDIA's .run installer; in a container add 'graphics' to NVIDIA_DRIVER_CAPABILITIES (e.g. all) so that the runtime mounts it. Check with: vulkaninfo --summary"
  [ "$allow_software" -eq 1 ] || die "$msg"
  say "$msg (going on: --allow-software)"
fi
printf '%s\n' "$icd_note" >"$out/icd.txt"
if command -v vulkaninfo >/dev/null; then vulkaninfo --summary >"$out/vulkaninfo.txt" 2>&1 || true; fi
if command -v nvidia-smi >/dev/null; then nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true; fi

# Dawn prints a harmless message without a private runtime folder; tests and logs stay cleaner with one.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR="$(mktemp -d)"
  chmod 700 "$XDG_RUNTIME_DIR"
  export XDG_RUNTIME_DIR
fi
export GRASSFLOW_OFFLINE=1 # such a machine may have no network: never try a download
unset GRASSFLOW_BACKEND

# --- The device -------------------------------------------------------------------------------------------------
say "WebGPU adapter…"
node "$root/scripts/gpu-check.mjs" device "$out" >"$out/device.log" 2>&1 || {
  cat "$out/device.log" >&2
  die "WebGPU found no usable adapter (device.log above). With an NVIDIA GPU: its Vulkan driver must load (vulkaninfo --summary lists the GPU); see $out/icd.txt"
}
software="$(node -p "require('$out/device.json').software_rendering")"
described="$(node -p "require('$out/device.json').described")"
say "adapter: $described"
if [ "$software" = "true" ] && [ "$allow_software" -ne 1 ]; then
  die "the adapter is a software fallback ($described), not the GPU: its numbers would be the CPU's. Make NVIDIA's Vulkan driver visible (see above), or pass --allow-software to measure it anyway, labelled as software rendering"
fi

# --- bench ------------------------------------------------------------------------------------------------------
if [ "$quick" -eq 1 ]; then
  size=(--preset tiny --vocab 256 --batch 2)
  bench_steps=(--steps 2 --warmup 1)
else
  size=(--preset paper-6l --batch 8)
  bench_steps=(--steps 20 --warmup 3)
fi
for model in grassmann transformer-dpa transformer-ea; do
  say "bench $model ${size[*]} ${bench_steps[*]}…"
  if "${cli[@]}" bench --model "$model" "${size[@]}" "${bench_steps[@]}" --backend webgpu --json \
    >"$out/bench-$model.jsonl" 2>"$out/bench-$model.log"; then
    tail -n 1 "$out/bench-$model.jsonl" >"$out/bench-$model.json"
    rm "$out/bench-$model.jsonl"
    node -p "const r = require('$out/bench-$model.json'); \`  \${r.train_tokens_per_s.toFixed(1)} tokens/s, \${r.sec_per_step.toFixed(3)} s/step\${r.software_rendering ? ' (software rendering)' : ''}\`" >&2
  else
    rm -f "$out/bench-$model.jsonl"
    say "bench $model failed (bench-$model.log):"
    tail -n 5 "$out/bench-$model.log" >&2
    failed=1
  fi
done

# --- training ---------------------------------------------------------------------------------------------------
train_note="skipped"
train_seconds=""
if [ "$skip_train" -eq 0 ]; then
  if [ -z "$data_dir" ]; then
    for d in "$root/../shared/data" "${HOME:-/nonexistent}/.cache/grassflow"; do
      if [ -e "$d/wikitext-2/wiki.train.tokens" ]; then data_dir="$d"; break; fi
    done
  fi
  if [ -z "$data_dir" ] || [ ! -e "$data_dir/wikitext-2/wiki.train.tokens" ]; then
    say "no WikiText-2 for the training run (--data-dir, GRASSFLOW_DATA_DIR, ../shared/data, ~/.cache/grassflow): copy a data folder laid out like ../shared/data along (wikitext-2/, bert-vocab/), or pass --skip-train"
    train_note="no data"
    failed=1
  else
    if [ "$quick" -eq 1 ]; then
      steps=3
      train_args=(--preset tiny --batch 2 --steps 3 --eval-every 3 --eval-tokens 128 --log-every 1)
    else
      # Steps for about --minutes of training at the Grassmann bench's s/step (evaluations add a little).
      steps="$(node -p "const r = (() => { try { return require('$out/bench-grassmann.json'); } catch { return null; } })();
        r === null ? 100 : Math.max(20, Math.min(20000, Math.round($minutes * 60 / r.sec_per_step)))")"
      train_args=(--preset paper-6l --batch 8 --steps "$steps" --eval-every "$(((steps + 3) / 4))" --eval-tokens 16384 --log-every "$(((steps + 49) / 50))")
    fi
    say "train grassmann ${train_args[*]} (data: $data_dir)…"
    t0="$(date +%s)"
    if "${cli[@]}" train --model grassmann "${train_args[@]}" --backend webgpu --data-dir "$data_dir" --quiet \
      --out "$out/train" >"$out/train.log" 2>&1; then
      train_seconds="$(($(date +%s) - t0))"
      train_note="grassmann ${train_args[*]}, data $data_dir"
      say "trained in ${train_seconds} s: $out/train/report.md"
    else
      train_note="failed (train.log)"
      tail -n 5 "$out/train.log" >&2
      failed=1
    fi
  fi
fi

# --- summary ----------------------------------------------------------------------------------------------------
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')"
node -e '
const [file, ...kv] = process.argv.slice(1);
const o = {};
for (let i = 0; i < kv.length; i += 2) o[kv[i]] = kv[i + 1];
require("node:fs").writeFileSync(file, JSON.stringify(o, null, 2) + "\n");
' "$out/environment.json" date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" host "$(uname -srm)" node "$(node --version)" \
  commit "$commit" mode "$([ "$quick" -eq 1 ] && echo 'quick (tiny sizes)' || echo 'full (paper-6l)')" \
  icd "$icd_note" bench "${size[*]} ${bench_steps[*]}" train "$train_note" train_seconds "$train_seconds"
node "$root/scripts/gpu-check.mjs" summary "$out" >/dev/null
say "summary: $out/summary.md"
exit "${failed:-0}"
