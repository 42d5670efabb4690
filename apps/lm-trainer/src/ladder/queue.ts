// The ladder's rungs as queue jobs: `ladder --queue URL` queues every rung (level × seed × model) for
// `grassflow-lm worker`, and a worker runs each in a child process (`grassflow-lm ladder rung`).
import { readFile } from 'node:fs/promises';
import { gitCommit, parseFlags, startBackend, StopSignal, UsageError, writeJsonAtomic } from '@grassflow/training';
import { BACKEND_NAMES } from '@grassflow/gpu-layers';
import type { LadderConfig } from './options.js';
import { runRung, type RungResult, type RungSpec } from './task.js';
import { runKey, type QueuedJob, type QueueOutcome, type RedisRunQueue } from '@grassflow/studies';

/** BullMQ's job name of a ladder rung. */
export const LADDER_JOB = 'ladder-rung';

/** A rung as a job: its spec (everything it trains and scores), the ladder's folder, the coordinator's commit. */
export interface LadderJobData {
  ladder: string;
  key: string;
  spec: RungSpec;
  code: string | null;
}

/** Every rung of a ladder config, in the order the in-process ladder runs them (level, then seed, then model). */
export function rungSpecs(cfg: LadderConfig): RungSpec[] {
  const out: RungSpec[] = [];
  for (const level of cfg.levels) {
    for (const seed of cfg.seeds) {
      for (const model of cfg.models) {
        const modelConfig = cfg.modelConfigs[model];
        if (modelConfig === undefined) throw new Error(`internal: no model config for ${model}`);
        out.push({
          family: cfg.family,
          level,
          model,
          modelConfig,
          seed,
          steps: cfg.steps,
          batch: cfg.batch,
          lr: cfg.lr,
          minLr: cfg.minLr,
          warmup: cfg.warmup,
          weightDecay: cfg.weightDecay,
          clip: cfg.clip,
          beta1: cfg.beta1,
          beta2: cfg.beta2,
          evalSeqs: cfg.evalSeqs,
          evalSeed: cfg.evalSeed,
        });
      }
    }
  }
  return out;
}

/** A rung's key: the hash of its whole spec (the same rung of two ladders is one job). */
export function rungKey(spec: RungSpec): string {
  return runKey({ ladderRung: spec });
}

/**
 * Queue the rungs and wait for them; `onResult` gets each finished rung with its index in `specs` (results come in
 * any order).
 */
export async function queueRungs(
  queue: RedisRunQueue,
  out: string,
  specs: readonly RungSpec[],
  onResult: (index: number, r: RungResult, worker: string) => Promise<void>,
): Promise<QueueOutcome> {
  const code = gitCommit();
  const jobs = specs.map((spec): QueuedJob<LadderJobData> => ({
    key: rungKey(spec),
    name: LADDER_JOB,
    data: { ladder: out, key: rungKey(spec), spec, code },
    where: `level ${spec.level} ${spec.model} seed ${spec.seed}`,
  }));
  const index = new Map(jobs.map((j, i) => [j.key, i]));
  const say = (line: string): void => void process.stderr.write(`ladder ${out}: ${line}\n`);
  return queue.runJobs<LadderJobData, RungResult>(jobs, say, async (j, r, worker) => {
    if (typeof r?.accuracy !== 'number') throw new Error(`job ${j.key} completed without a rung result`);
    await onResult(index.get(j.key) as number, r, worker);
  });
}

/**
 * `ladder rung <job.json> --result FILE [--backend B]`: what a worker runs in a child process for one rung. Not for
 * people: `grassflow-lm worker` starts it.
 */
export async function ladderRungCommand(argv: readonly string[]): Promise<number> {
  const [file, ...flags] = argv;
  if (file === undefined || file.startsWith('-')) throw new UsageError('give the job file first, then the flags');
  const f = parseFlags(flags, {
    result: { type: 'string', metavar: 'FILE', help: 'where the rung result goes' },
    backend: { type: 'string', choices: BACKEND_NAMES, help: 'tfjs backend' },
  });
  if (f.result === undefined) throw new UsageError('give --result FILE', 'result');
  const job = JSON.parse(await readFile(file, 'utf8')) as LadderJobData;
  if (rungKey(job.spec) !== job.key) throw new Error(`the job's rung hashes to ${rungKey(job.spec)}, not ${job.key}`);
  process.env['GRASSFLOW_WASM_THREADS'] ??= '1'; // as in process: tiny models, one thread is faster
  await startBackend(f.backend);
  const s = job.spec;
  process.stderr.write(`ladder ${job.ladder}: level ${s.level} ${s.model} seed ${s.seed} (${s.steps} steps)\n`);
  const signal = new StopSignal().install();
  try {
    const r = await runRung(job.spec, { shouldStop: () => signal.requested !== null });
    if (r === null) return StopSignal.exitCode(signal.requested ?? 'SIGTERM');
    await writeJsonAtomic(f.result, r);
    process.stderr.write(
      `ladder ${job.ladder}: accuracy ${r.accuracy.toFixed(3)}, final loss ${r.finalLoss.toFixed(3)}\n`,
    );
    return 0;
  } finally {
    signal.uninstall();
  }
}
