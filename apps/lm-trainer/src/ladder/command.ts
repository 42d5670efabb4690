// `ladder`: DPA vs EA vs Grassmann trained from scratch on a ladder of synthetic tasks; one report.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { SyntheticTask } from '@grassflow/datasets';
import {
  gitCommit,
  parseFlags,
  startBackend,
  StopSignal,
  UsageError,
  writeJsonAtomic,
  formatDuration,
  planCommand,
  prepareOutputFolder,
  type CliCommand,
} from '@grassflow/training';
import { ladderConfigFrom, LADDER_FLAGS, type LadderConfig } from './options.js';
import { grassmannReach, reachableFraction, receptiveField } from './reach.js';
import {
  cellsOf,
  chanceAccuracy,
  ruleOf,
  writeLadderReport,
  writeLadderResults,
  type LadderResults,
  type LevelInfo,
} from './report.js';
import { runRung, type RungResult } from './task.js';
import { ladderRungCommand, queueRungs, rungSpecs } from './queue.js';
import { queueUrlOf, RedisRunQueue, type QueueOutcome, type QueueUrl } from '@grassflow/studies';

/** config.json of a ladder run folder. */
export interface LadderRunConfig {
  format: 'grassflow-lm-ladder';
  formatVersion: 1;
  command: string;
  ladder: LadderConfig;
  backend: { name: string; simd?: boolean; threads?: number; blas?: string; tfjsCore: string };
  git: string | null;
  node: string;
  created: string;
}

/** Per level: the rule and, with a Grassmann model, the share of held-out targets within its reach. */
function levelInfos(cfg: LadderConfig): { levels: LevelInfo[]; grassmann: LadderResults['grassmann'] } {
  const c = cfg.modelConfigs['grassmann'];
  const g = c?.kind === 'grassmann' ? c : undefined;
  const reach = g === undefined ? null : grassmannReach(g.offsets);
  const levels = cfg.levels.map((level) => {
    const task = new SyntheticTask({
      family: cfg.family,
      level,
      seqLen: cfg.seqLen,
      vocabSize: cfg.vocabSize,
      seed: cfg.evalSeed,
    });
    return {
      level,
      rule: ruleOf(cfg.family, level),
      grassmannReachable: reach === null ? null : reachableFraction(task, reach, cfg.evalSeqs),
    };
  });
  return {
    levels,
    grassmann: g === undefined || reach === null ? null : { reach, receptiveField: receptiveField(g.offsets) },
  };
}

const USAGE =
  'grassflow-lm ladder [--quick] [--family lagged-sum|recall] [--levels 1..K] [--models M,M] [--seeds N] [--steps S] [--out DIR]';
const DESCRIPTION =
  'Train every model kind from scratch on each level of a synthetic task family (same steps, seeds and data order), ' +
  'score greedy next-token accuracy on held-out sequences at the positions the rule determines, and write ' +
  'config.json, results.json and report.md (tables level × model, mean ± std over seeds, accuracy plots in SVG and PNG). ' +
  'Without --quick the larger "full" profile is used; any size flag overrides either profile.';

/** Everything `ladder` does, resolved once from its flags. */
export interface LadderPlan {
  /** The validated ladder: levels, models, seeds, sizes, optimizer. */
  cfg: LadderConfig;
  /** The run folder (refused when it already holds a ladder run). */
  out: string;
  command: string;
  backend: string | undefined;
  /** Where the rungs go as jobs for `grassflow-lm worker` (--queue or GRASSFLOW_QUEUE); undefined: in this process. */
  queue: QueueUrl | undefined;
}

/** The plan of `grassflow-lm ladder ARGV`: flags parsed and checked once, before any backend or folder. */
export function planLadder(argv: readonly string[]): LadderPlan {
  const f = parseFlags(argv, LADDER_FLAGS);
  const cfg = ladderConfigFrom(f);
  const out = resolve(f.out ?? `runs/ladder-${cfg.family}`);
  if (existsSync(join(out, 'config.json')))
    throw new UsageError(`${out} already holds a ladder run: choose another --out`, 'out');
  const command = ['grassflow-lm', 'ladder', ...argv].join(' ');
  return { cfg, out, command, backend: f.backend, queue: queueUrlOf(f.queue) };
}

/** Run a ladder plan: every rung (in this process or on workers), then the report; returns the exit code. */
export async function runLadderPlan(plan: LadderPlan): Promise<number> {
  const { cfg, out, command } = plan;
  // The ladder's models are tiny (d 32–64): a wasm thread pool only adds synchronisation (measured: 1 thread is
  // faster on 2 loaded cores). GRASSFLOW_WASM_THREADS, when set, still decides.
  process.env['GRASSFLOW_WASM_THREADS'] ??= '1';
  prepareOutputFolder(out, { command: 'ladder' });
  const backend = await startBackend(plan.backend);
  const runConfig: LadderRunConfig = {
    format: 'grassflow-lm-ladder',
    formatVersion: 1,
    command,
    ladder: cfg,
    backend: {
      name: backend.name,
      simd: backend.simd,
      threads: backend.threads,
      ...(backend.blas === undefined ? {} : { blas: backend.blas }),
      tfjsCore: backend.tfjsCore,
    },
    git: gitCommit(),
    node: process.version,
    created: new Date().toISOString(),
  };
  await writeJsonAtomic(join(out, 'config.json'), runConfig);
  const { levels, grassmann } = levelInfos(cfg);
  const runs: RungResult[] = [];
  const results = (complete: boolean): LadderResults => ({
    format: 'grassflow-lm-ladder-results',
    formatVersion: 1,
    complete,
    chance: chanceAccuracy(cfg),
    grassmann,
    levels,
    cells: cellsOf(cfg, runs),
    runs,
  });
  const total = cfg.levels.length * cfg.models.length * cfg.seeds.length;
  process.stderr.write(
    `ladder ${out}: ${cfg.family}, levels ${cfg.levels.join(',')} × ${cfg.models.join(',')} × seeds ${cfg.seeds.join(',')} = ${total} runs of ${cfg.steps} steps (${cfg.profile} profile)\n`,
  );
  const t0 = performance.now();
  const specs = rungSpecs(cfg);
  const q = plan.queue;
  const progress = (r: RungResult, on = ''): void => {
    const elapsed = (performance.now() - t0) / 1000;
    process.stderr.write(
      `[${runs.length}/${total}] level ${r.level} ${r.model} seed ${r.seed}${on}: accuracy ${r.accuracy.toFixed(3)}, solved ${r.solvedFraction.toFixed(3)}, ` +
        `final loss ${r.finalLoss.toFixed(3)} (${r.trainSeconds.toFixed(0)} s; elapsed ${formatDuration(elapsed)}, ETA ${formatDuration((elapsed / runs.length) * (total - runs.length))})\n`,
    );
  };
  let stopped: NodeJS.Signals | null = null;
  let failed = 0;
  if (q !== undefined) {
    // each rung a job for `grassflow-lm worker`; results come in any order and are kept in the in-process order
    const queue = await RedisRunQueue.open(q, { program: 'grassflow-lm' });
    const byIndex: Array<RungResult | undefined> = [];
    let outcome: QueueOutcome;
    try {
      outcome = await queueRungs(queue, out, specs, async (i, r, worker) => {
        byIndex[i] = r;
        runs.splice(0, runs.length, ...byIndex.filter((x): x is RungResult => x !== undefined));
        await writeLadderResults(out, results(false));
        progress(r, ` on ${worker}`);
      });
    } finally {
      await queue.close();
    }
    if (outcome.stopped !== undefined) stopped = outcome.stopped === 130 ? 'SIGINT' : 'SIGTERM';
    if (outcome.failed.length > 0) {
      process.stderr.write(
        `ladder ${out}: ${outcome.failed.length} of ${total} runs failed (${outcome.failed.map((x) => `${x.key}: ${x.message}`).join('; ')}); the report has the others\n`,
      );
      failed = outcome.failed.length;
    }
  } else {
    const signal = new StopSignal().install();
    try {
      for (const spec of specs) {
        const r = await runRung(spec, { shouldStop: () => signal.requested !== null });
        if (r === null) {
          stopped = signal.requested;
          break;
        }
        runs.push(r);
        await writeLadderResults(out, results(false));
        progress(r);
      }
    } finally {
      signal.uninstall();
    }
  }
  const final = results(stopped === null && failed === 0);
  await writeLadderResults(out, final);
  const seconds = (performance.now() - t0) / 1000;
  const path = await writeLadderReport(out, cfg, final, {
    command,
    backend: backend.name,
    loadavg: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    seconds,
  });
  if (stopped !== null) {
    process.stderr.write(
      `ladder stopped by ${stopped} after ${runs.length} of ${total} runs; partial report: ${path}\n`,
    );
    return StopSignal.exitCode(stopped);
  }
  if (failed > 0) {
    process.stderr.write(`ladder: ${failed} of ${total} runs failed (above); report of the others: ${path}\n`);
    return 1;
  }
  process.stderr.write(`ladder finished: ${total} runs in ${formatDuration(seconds)}\n`);
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

/** `ladder`: flags → plan (once) → run. */
const plannedLadder = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: LADDER_FLAGS,
  help: 'DPA vs EA vs Grassmann on a ladder of synthetic tasks, one report',
  plan: planLadder,
  run: runLadderPlan,
});

/**
 * `grassflow-lm ladder` in the program's command table; `ladder rung …` is a worker's child process for one rung
 * (its own flags, not the ladder's: see ladderRungCommand).
 */
export const ladderCli: CliCommand = {
  ...plannedLadder,
  run: (argv) => (argv[0] === 'rung' ? ladderRungCommand(argv.slice(1)) : plannedLadder.run(argv)),
};
