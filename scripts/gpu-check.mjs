#!/usr/bin/env node
// The Node half of scripts/gpu-check.sh, on the built workspace only (no installs, no network):
//   node scripts/gpu-check.mjs device OUT_DIR   the WebGPU adapter initBackend gets (vendor, architecture, fallback)
//                                               and a 256×256 matMul against cpu; writes OUT_DIR/device.json
//   node scripts/gpu-check.mjs summary OUT_DIR  OUT_DIR/summary.md from device.json, bench-*.json and train/
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const [command, outArg] = process.argv.slice(2);
if ((command !== 'device' && command !== 'summary') || outArg === undefined) {
  console.error('usage: node scripts/gpu-check.mjs device|summary OUT_DIR');
  process.exit(2);
}
const out = resolve(outArg);

/** The built @grassflow/gpu-layers (ESM), and tfjs-core from its folder (the same instance it uses). */
async function gpuLayers() {
  const dist = join(root, 'packages/gpu-layers/dist/index.js');
  if (!existsSync(dist))
    throw new Error(`${dist} is missing: build the workspace first (pnpm install && pnpm build), then copy it here`);
  const layers = await import(pathToFileURL(dist).href);
  const { createRequire } = await import('node:module');
  const core = createRequire(dist).resolve('@tensorflow/tfjs-core');
  const tf = await import(pathToFileURL(core).href);
  return { layers, tf };
}

async function device() {
  const { layers, tf } = await gpuLayers();
  const info = await layers.initBackend({ backend: 'webgpu' });
  const adapter = info.adapter;
  // A correctness check on this device: 256×256 matMul of seeded normals, against the cpu backend.
  const product = async () => {
    const a = tf.randomNormal([256, 256], 0, 1, 'float32', 1);
    const b = tf.randomNormal([256, 256], 0, 1, 'float32', 2);
    const c = tf.matMul(a, b);
    const v = await c.data();
    tf.dispose([a, b, c]);
    return v;
  };
  const t0 = performance.now();
  const gpu = await product();
  const seconds = (performance.now() - t0) / 1000;
  tf.removeBackend('webgpu'); // lets Node exit
  await layers.initBackend({ backend: 'cpu' });
  const cpu = await product();
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < cpu.length; i++) {
    diff = Math.max(diff, Math.abs(gpu[i] - cpu[i]));
    scale = Math.max(scale, Math.abs(cpu[i]));
  }
  const result = {
    adapter,
    described: layers.describeAdapter(adapter),
    software_rendering: adapter.fallback === true,
    tfjs_core: info.tfjsCore,
    matmul_256: { rel_err_vs_cpu: diff / scale, first_call_seconds: seconds },
  };
  writeFileSync(join(out, 'device.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result));
}

const readJson = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined);
const fix = (x, d) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '–');

function summary() {
  const dev = readJson(join(out, 'device.json'));
  const env = readJson(join(out, 'environment.json')) ?? {};
  const lines = ['# gpu-check', ''];
  const software = dev?.software_rendering === true;
  if (software)
    lines.push(
      '> **Software rendering.** The WebGPU adapter is a software fallback (e.g. Mesa lavapipe) running on the CPU:',
      '> every number below is CPU speed, not GPU numbers. It was measured only because `--allow-software` was given.',
      '',
    );
  lines.push(
    `- when: ${env.date ?? '?'}; host: ${env.host ?? '?'}; node ${env.node ?? '?'}; workspace ${env.commit ?? '?'}`,
    `- mode: ${env.mode ?? '?'}`,
    `- Vulkan ICD: ${env.icd ?? '?'}`,
    `- adapter: ${dev === undefined ? 'none (see device.log)' : dev.described}`,
  );
  if (dev !== undefined)
    lines.push(
      `- vendor ${dev.adapter.vendor || '?'}, architecture ${dev.adapter.architecture || '?'}, ` +
        `fallback ${dev.adapter.fallback}; tfjs-core ${dev.tfjs_core}`,
      `- 256×256 matMul against cpu: relative error ${dev.matmul_256.rel_err_vs_cpu.toExponential(2)}`,
    );
  lines.push('', '## Training speed (`grassflow-lm bench --backend webgpu`)', '');
  lines.push('| model | preset | params | B × L | V | train tokens/s | s/step | last loss | software rendering |');
  lines.push('|---|---|---:|---|---:|---:|---:|---:|---|');
  for (const model of ['grassmann', 'transformer-dpa', 'transformer-ea']) {
    const r = readJson(join(out, `bench-${model}.json`));
    if (r === undefined) {
      lines.push(`| ${model} | – | – | – | – | failed (bench-${model}.log) | – | – | – |`);
      continue;
    }
    lines.push(
      `| ${r.model} | ${r.preset} | ${r.params.toLocaleString('en-US')} | ${r.batch} × ${r.block} | ${r.vocab} | ` +
        `${fix(r.train_tokens_per_s, 1)} | ${fix(r.sec_per_step, 3)} | ${fix(r.last_loss, 3)} | ` +
        `${r.software_rendering ? 'yes: CPU speed' : 'no'} |`,
    );
  }
  lines.push(
    '',
    `Each row: \`grassflow-lm bench --model M ${env.bench ?? ''} --backend webgpu\`, full training steps (forward, loss, ` +
      'backward, clip, AdamW) timed after the warm-up ones: tokens/s = timed steps · B · L / their seconds.',
    '',
  );
  lines.push('## Training run (`grassflow-lm train --backend webgpu`)', '');
  const runDir = join(out, 'train');
  const metricsPath = join(runDir, 'metrics.jsonl');
  if (!existsSync(metricsPath)) {
    lines.push(env.train === 'skipped' ? 'Skipped (--skip-train).' : 'No training run (see train.log).');
  } else {
    const records = readFileSync(metricsPath, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
    const train = records.filter((r) => r.type === 'train');
    const evals = records.filter((r) => r.type === 'eval');
    const first = train[0];
    const last = train[train.length - 1];
    const lastEval = evals[evals.length - 1];
    lines.push(
      `- ${env.train ?? ''}`,
      `- steps ${last?.step ?? 0}; train loss ${fix(first?.loss, 3)} (step ${first?.step ?? '–'}) → ${fix(last?.loss, 3)} ` +
        `(step ${last?.step ?? '–'}); last logged ${fix(last?.tokens_per_s, 0)} tokens/s`,
      lastEval === undefined
        ? '- no evaluation recorded'
        : `- validation at step ${lastEval.step}: PPL ${fix(lastEval.val_ppl, 1)} (NLL ${fix(lastEval.val_nll, 4)}, ` +
            `${lastEval.val_tokens} tokens)`,
      `- wall time of the run: ${env.train_seconds ?? '?'} s`,
      '- the run folder: [train/report.md](train/report.md), loss curve below, metrics in train/metrics.jsonl',
      '',
      '| step | train loss |',
      '|---:|---:|',
      ...train.map((r) => `| ${r.step} | ${fix(r.loss, 4)} |`),
    );
    if (existsSync(join(runDir, 'loss.png'))) lines.push('', '![training loss](train/loss.png)');
  }
  lines.push('');
  writeFileSync(join(out, 'summary.md'), lines.join('\n'));
  console.log(join(out, 'summary.md'));
}

try {
  if (command === 'device') await device();
  else summary();
  process.exit(0);
} catch (err) {
  console.error(`gpu-check: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
