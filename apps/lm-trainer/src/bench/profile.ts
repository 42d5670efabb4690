// `grassflow-lm bench --profile`: where a training step spends its time — the phases of trainStep timed with wall
// clocks (forward + loss + backward, clipping, the loss/norm readback, AdamW), every kernel of one step from
// tf.profile (count and time by kernel and by kind), and the fixed cost of dispatching one op.
import { loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { countParams, initBackend, type BackendName } from '@grassflow/gpu-layers';
import {
  clipFactor,
  globalNorm,
  parseFlags,
  trainStep,
  planCommand,
  UsageError,
  withSeededRandom,
  type AdamW,
  type CliCommand,
} from '@grassflow/training';
import type { ModelKind } from '../shared/model-options.js';
import { deviceLabel, SOFTWARE_RENDERING_NOTE, type DeviceLabel } from './device-label.js';
import { BENCH_FLAGS, BENCH_OPTIMIZER, benchModelConfig, benchTask } from './train.js';
import type { TrainBenchPlan } from './train.js';

/** What tf.profile resolves to (tfjs-core does not export the type by name). */
type ProfileInfo = Awaited<ReturnType<typeof tf.profile>>;

/** The kinds of kernel the breakdown groups by. */
export type KernelKind = 'matmul' | 'elementwise' | 'reduction' | 'data movement';

const MATMUL = new Set(['MatMul', 'BatchMatMul', '_FusedMatMul', 'Conv2D', 'FusedConv2D']);
const REDUCTION = new Set(['Sum', 'Mean', 'Max', 'Min', 'Prod', 'ArgMax', 'ArgMin', 'All', 'Any', 'Softmax']);
const MOVEMENT = new Set([
  'Transpose',
  'Slice',
  'StridedSlice',
  'Concat',
  'Pad',
  'PadV2',
  'Reshape',
  'GatherV2',
  'GatherNd',
  'UnsortedSegmentSum',
  'Tile',
  'Identity',
  'Cast',
  'Pack',
  'Unpack',
  'SplitV',
  'ScatterNd',
  'TensorScatterUpdate',
  'Fill',
  'ZerosLike',
  'OnesLike',
  'Range',
  'OneHot',
  'Reverse',
]);

/** The kind of a kernel by its tfjs name; everything not listed is element-wise (Add, Mul, Exp, Erf, Sigmoid, …). */
export function kernelKind(name: string): KernelKind {
  if (MATMUL.has(name)) return 'matmul';
  if (REDUCTION.has(name)) return 'reduction';
  if (MOVEMENT.has(name)) return 'data movement';
  return 'elementwise';
}

/** One row of a kernel table: calls and milliseconds per step. */
export interface KernelRow {
  name: string;
  kind: KernelKind | 'all';
  count: number;
  ms: number;
}

/** Per step: count and time of each kernel name, largest time first, and the totals by kind. */
export function summariseKernels(
  kernels: ReadonlyArray<{ name: string; kernelTimeMs: number }>,
  steps = 1,
): { byName: KernelRow[]; byKind: KernelRow[] } {
  const byName = new Map<string, KernelRow>();
  for (const k of kernels) {
    const row = byName.get(k.name) ?? { name: k.name, kind: kernelKind(k.name), count: 0, ms: 0 };
    row.count += 1 / steps;
    row.ms += (Number.isFinite(k.kernelTimeMs) ? k.kernelTimeMs : 0) / steps;
    byName.set(k.name, row);
  }
  const rows = [...byName.values()].sort((a, b) => b.ms - a.ms);
  const kinds: KernelKind[] = ['matmul', 'elementwise', 'reduction', 'data movement'];
  const byKind = kinds.map((kind) => {
    const of = rows.filter((r) => r.kind === kind);
    return { name: kind, kind, count: of.reduce((s, r) => s + r.count, 0), ms: of.reduce((s, r) => s + r.ms, 0) };
  });
  return { byName: rows, byKind };
}

/** Phase times of trainStep, ms per step (mean over the timed steps). */
export interface StepPhases {
  /** tf.variableGrads of the loss: forward, loss (and the chunked head's gradient), backward. */
  forward_loss_backward: number;
  /** The same forward and loss with no gradient tape (so the backward's share is the difference, roughly). */
  forward_loss_no_tape: number;
  /** The global gradient norm (clipping's factor itself is applied inside AdamW's pass). */
  clip: number;
  /** The readback of the loss (trainStep awaits it with the norm before updating). */
  readback: number;
  /** AdamW.apply over every parameter. */
  adamw: number;
  /** Disposing the step's tensors. */
  dispose: number;
  step: number;
}

/** The JSON line of `grassflow-lm bench --profile --json`. */
export interface ProfileResult extends DeviceLabel {
  model: ModelKind;
  preset: string;
  batch: number;
  block: number;
  vocab: number;
  d_model: number;
  layers: number;
  params: number;
  steps: number;
  backend: string;
  threads: number;
  simd: boolean | null;
  train_tokens_per_s: number;
  cpu_sec_per_step: number;
  phases_ms: StepPhases;
  /** One step under tf.profile: kernels and Σ kernel times per phase. */
  kernels_per_step: { forward_loss_backward: number; clip: number; adamw: number; total: number };
  kernel_ms_per_step: { forward_loss_backward: number; clip: number; adamw: number; total: number };
  /** Wall-clock ms of the profiled step (the profiler adds its own bookkeeping). */
  profiled_step_ms: number;
  by_kind: KernelRow[];
  /** The largest kernels by time (at most 25). */
  top_kernels: KernelRow[];
  /** µs of one tiny op ([4] + [4]) outside a tape, and of one op recorded on a tape plus its backward. */
  dispatch_us_per_op: number;
  dispatch_us_per_taped_op: number;
  loadavg_start: number;
  loadavg_end: number;
}

/** µs per tiny kernel call, outside a tape and on one (forward + backward), after a warm-up. */
function dispatchCost(): { plain: number; taped: number } {
  const n = 2000;
  return tf.tidy(() => {
    const a = tf.ones([4]);
    const b = tf.ones([4]);
    for (let i = 0; i < 200; i++) tf.add(a, b).dispose();
    let t0 = performance.now();
    for (let i = 0; i < n; i++) tf.add(a, b).dispose();
    const plain = ((performance.now() - t0) * 1000) / n;
    const v = tf.variable(tf.ones([4]));
    const chain = (k: number) => () => {
      let x: tf.Tensor = v;
      for (let i = 0; i < k; i++) x = tf.add(x, b);
      return tf.sum<tf.Scalar>(x);
    };
    tf.dispose(tf.variableGrads(chain(100), [v]).grads);
    t0 = performance.now();
    const r = tf.variableGrads(chain(n), [v]);
    const taped = ((performance.now() - t0) * 1000) / n;
    tf.dispose([r.value, ...Object.values(r.grads)]);
    v.dispose();
    return { plain, taped };
  });
}

/** One step of trainStep's code, in parts (the same calls, each timed): variableGrads → clip → readback → AdamW. */
async function timedStep(
  loss: () => tf.Scalar,
  optimizer: AdamW,
  seed: number,
  clip: number,
  lr: number,
  profile: boolean,
): Promise<{
  ms: Omit<StepPhases, 'forward_loss_no_tape'>;
  kernels?: Record<'grads' | 'clip' | 'adamw', ProfileInfo>;
}> {
  const variables = optimizer.params.map((p) => p.variable);
  const run = async <T>(f: () => T | Promise<T>): Promise<{ value: T; info?: ProfileInfo }> => {
    if (!profile) return { value: await f() };
    let value: T | undefined;
    const info = await tf.profile(async () => {
      value = await f();
      return [];
    });
    // tf.profile returns the engine's one profile object, overwritten by the next call: keep a copy. A custom op
    // (tf.customGrad) is listed too, as a scope whose time includes its kernels: keep registered kernels only.
    const backend = tf.getBackend();
    const kernels = info.kernels.filter((k) => tf.getKernel(k.name, backend) !== undefined);
    return { value: value as T, info: { ...info, kernels } };
  };
  const t0 = performance.now();
  const g = await run(() => withSeededRandom(seed >>> 0, () => tf.variableGrads(loss, variables)));
  const t1 = performance.now();
  // trainStep's order: the global norm (clipping's part; its factor is applied inside AdamW's pass), the loss read,
  // then AdamW. On cpu/wasm the norm is a loop over the gradients' storage: no kernels.
  const c = await run(() => globalNorm(g.value.grads));
  const t2 = performance.now();
  await g.value.value.data();
  const t3 = performance.now();
  const a = await run(() => optimizer.apply(g.value.grads, lr, { gradScale: clipFactor(c.value, clip) }));
  const t4 = performance.now();
  tf.dispose([g.value.value, ...Object.values(g.value.grads)]);
  const t5 = performance.now();
  const ms = {
    forward_loss_backward: t1 - t0,
    clip: t2 - t1,
    readback: t3 - t2,
    adamw: t4 - t3,
    dispose: t5 - t4,
    step: t5 - t0,
  };
  if (!profile) return { ms };
  return {
    ms,
    kernels: { grads: g.info as ProfileInfo, clip: c.info as ProfileInfo, adamw: a.info as ProfileInfo },
  };
}

const OPTIMIZER = BENCH_OPTIMIZER;

/** The plan of `grassflow-lm bench --profile ARGV`: the training-step benchmark's flags, one pass per step. */
export function planProfile(argv: readonly string[]): TrainBenchPlan {
  const f = parseFlags(argv, BENCH_FLAGS);
  if (f['micro-batch'] !== undefined && f['micro-batch'] !== f.batch)
    throw new UsageError('--profile times one pass per step: give no --micro-batch', 'micro-batch');
  return { flags: f, config: benchModelConfig(f) };
}

/** Profile `f.steps` timed steps (after `f.warmup` untimed ones) and one step under tf.profile. */
export async function runProfile({ flags: f, config }: TrainBenchPlan): Promise<ProfileResult> {
  const backend = await initBackend({
    ...(f.backend === undefined ? {} : { backend: f.backend as BackendName }),
    ...(f.threads === undefined ? {} : { threads: f.threads }),
  });
  const total = f.warmup + f.steps + 1;
  const { model, optimizer, task, B, L } = await benchTask(config, { ...f, 'micro-batch': undefined }, total);
  const sum: StepPhases = {
    forward_loss_backward: 0,
    forward_loss_no_tape: 0,
    clip: 0,
    readback: 0,
    adamw: 0,
    dispose: 0,
    step: 0,
  };
  let cpu = 0;
  let load0 = 0;
  try {
    for (let s = 0; s < f.warmup; s++) {
      const step = { lr: OPTIMIZER.lr, clipNorm: OPTIMIZER.clip, randomSeed: f.seed + s, step: s + 1 };
      await trainStep(task.nextBatch().loss, optimizer, step);
    }
    load0 = loadavg()[0] ?? 0;
    for (let s = 0; s < f.steps; s++) {
      const batch = task.nextBatch();
      const c0 = process.cpuUsage();
      const { ms } = await timedStep(batch.loss, optimizer, f.seed + s, OPTIMIZER.clip, OPTIMIZER.lr, false);
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1e6;
      for (const k of Object.keys(ms) as Array<keyof typeof ms>) sum[k] += ms[k];
      const t0 = performance.now();
      withSeededRandom((f.seed + s) >>> 0, () => tf.tidy(() => batch.loss())).dispose(); // forward + loss, no tape
      sum.forward_loss_no_tape += performance.now() - t0;
    }
    const batch = task.nextBatch();
    const t0 = performance.now();
    const profiled = await timedStep(batch.loss, optimizer, f.seed, OPTIMIZER.clip, OPTIMIZER.lr, true);
    const profiledMs = performance.now() - t0;
    const k = profiled.kernels as Record<'grads' | 'clip' | 'adamw', ProfileInfo>;
    const all = [...k.grads.kernels, ...k.clip.kernels, ...k.adamw.kernels];
    const kernelMs = (list: ProfileInfo['kernels']) =>
      list.reduce((s, x) => s + (Number.isFinite(x.kernelTimeMs) ? (x.kernelTimeMs as number) : 0), 0);
    const { byName, byKind } = summariseKernels(
      all.map((x) => ({ name: x.name, kernelTimeMs: x.kernelTimeMs as number })),
    );
    const dispatch = dispatchCost();
    const mean = Object.fromEntries(Object.entries(sum).map(([n, v]) => [n, v / f.steps])) as unknown as StepPhases;
    return {
      model: f.model as ModelKind,
      preset: f.preset,
      batch: B,
      block: L,
      vocab: config.vocabSize,
      d_model: config.dModel,
      layers: config.nLayers,
      params: countParams(config),
      steps: f.steps,
      backend: backend.name,
      threads: backend.threads ?? 1,
      simd: backend.simd ?? null,
      ...deviceLabel(backend),
      train_tokens_per_s: (B * L * 1000) / mean.step,
      cpu_sec_per_step: cpu / f.steps,
      phases_ms: mean,
      kernels_per_step: {
        forward_loss_backward: k.grads.kernels.length,
        clip: k.clip.kernels.length,
        adamw: k.adamw.kernels.length,
        total: all.length,
      },
      kernel_ms_per_step: {
        forward_loss_backward: kernelMs(k.grads.kernels),
        clip: kernelMs(k.clip.kernels),
        adamw: kernelMs(k.adamw.kernels),
        total: kernelMs(all),
      },
      profiled_step_ms: profiledMs,
      by_kind: byKind,
      top_kernels: byName.slice(0, 25),
      dispatch_us_per_op: dispatch.plain,
      dispatch_us_per_taped_op: dispatch.taped,
      loadavg_start: load0,
      loadavg_end: loadavg()[0] ?? 0,
    };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

/** Markdown tables of a profile: phases, kernels by kind, the largest kernels. */
export function formatProfile(p: ProfileResult): string {
  const ms = (x: number) => x.toFixed(1);
  const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(1)}%`;
  const ph = p.phases_ms;
  const kt = p.kernel_ms_per_step.total;
  const lines = [
    ...(p.software_rendering ? [`**${SOFTWARE_RENDERING_NOTE}.**`, ''] : []),
    `${p.model} ${p.preset} (d ${p.d_model}, ${p.layers} layers, V ${p.vocab.toLocaleString('en-US')}, ` +
      `${p.params.toLocaleString('en-US')} params), B ${p.batch}, L ${p.block}; ` +
      (p.adapter === null
        ? `${p.backend}${p.simd === null ? '' : p.simd ? ' SIMD' : ''}, ${p.threads} thread${p.threads === 1 ? '' : 's'}; `
        : `${p.backend} on ${p.adapter}; `) +
      `${p.steps} timed steps: ${Math.round(p.train_tokens_per_s).toLocaleString('en-US')} tokens/s, ` +
      `CPU ${p.cpu_sec_per_step.toFixed(2)} s/step; load ${p.loadavg_start.toFixed(2)} → ${p.loadavg_end.toFixed(2)}`,
    '',
    '| phase (wall clock, mean per step) | ms | share |',
    '|---|---:|---:|',
    `| forward + loss + backward (variableGrads) | ${ms(ph.forward_loss_backward)} | ${pct(ph.forward_loss_backward, ph.step)} |`,
    `| … of which forward + loss (timed alone, no tape) | ${ms(ph.forward_loss_no_tape)} | ${pct(ph.forward_loss_no_tape, ph.step)} |`,
    `| global gradient norm (clipping: its factor is applied inside AdamW) | ${ms(ph.clip)} | ${pct(ph.clip, ph.step)} |`,
    `| readback of the loss | ${ms(ph.readback)} | ${pct(ph.readback, ph.step)} |`,
    `| AdamW | ${ms(ph.adamw)} | ${pct(ph.adamw, ph.step)} |`,
    `| dispose | ${ms(ph.dispose)} | ${pct(ph.dispose, ph.step)} |`,
    `| step | ${ms(ph.step)} | 100% |`,
    '',
    `One step under tf.profile (${ms(p.profiled_step_ms)} ms wall): ${p.kernels_per_step.total} kernels ` +
      `(${p.kernels_per_step.forward_loss_backward} forward + loss + backward, ${p.kernels_per_step.clip} clip, ` +
      `${p.kernels_per_step.adamw} AdamW), Σ kernel time ${ms(kt)} ms ` +
      `(${ms(p.kernel_ms_per_step.forward_loss_backward)} / ${ms(p.kernel_ms_per_step.clip)} / ` +
      `${ms(p.kernel_ms_per_step.adamw)}); outside kernels (dispatch, tape, JS): ${ms(p.profiled_step_ms - kt)} ms. ` +
      `One tiny op costs ${p.dispatch_us_per_op.toFixed(1)} µs, one taped op with its backward ` +
      `${p.dispatch_us_per_taped_op.toFixed(1)} µs.`,
    '',
    '| kernels by kind | calls/step | ms/step | share of kernel time |',
    '|---|---:|---:|---:|',
    ...p.by_kind.map((r) => `| ${r.name} | ${Math.round(r.count)} | ${ms(r.ms)} | ${pct(r.ms, kt)} |`),
    '',
    '| kernel | kind | calls/step | ms/step | share of kernel time |',
    '|---|---|---:|---:|---:|',
    ...p.top_kernels.map((r) => `| ${r.name} | ${r.kind} | ${Math.round(r.count)} | ${ms(r.ms)} | ${pct(r.ms, kt)} |`),
  ];
  return lines.join('\n');
}

/** `grassflow-lm bench --profile`: the breakdown of a training step. */
export const profileBenchCli: CliCommand = planCommand({
  usage:
    'grassflow-lm bench --profile [--preset P] [--d-model N --layers N --vocab N] [--batch B] [--seq-len L] ' +
    '[--steps N] [--json]',
  description:
    'Where a training step spends its time: wall-clock phases of trainStep (forward + loss + backward, clip, ' +
    'readback, AdamW), every kernel of one step under tf.profile (by kind and the largest), and the cost of ' +
    'dispatching one op.',
  flags: BENCH_FLAGS,
  help: 'where a training step spends its time',
  plan: planProfile,
  run: async (plan) => {
    const p = await runProfile(plan);
    process.stdout.write(plan.flags.json ? `${JSON.stringify(p)}\n` : `${formatProfile(p)}\n`);
    return 0;
  },
});
