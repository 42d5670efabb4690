// What a study needs of a trainer: how one run is planned from its flags, trained in its run folder, turned into
// a ledger record, and how the ledger is reported. Everything else (the study file, keys, the ledger, the sitting,
// the queue) is the same for every trainer.
import type { LedgerFormat, StudyRecord } from './ledger.js';
import type { StudyEntry, StudyFlags, StudySpec } from './spec.js';

/** One run of a study, planned by its trainer: its entry, its train argv and its key (the hash of its config). */
export interface PlannedRun {
  entry: StudyEntry;
  argv: string[];
  key: string;
}

/** What a trainer is given to turn a finished run folder into its ledger record. */
export interface RecordArgs<P extends PlannedRun> {
  study: string;
  planned: P;
  runDir: string;
  /** Whether this sitting resumed the run from a checkpoint. */
  resumed: boolean;
  /** The study file's heldOut: score the finished run on its held-out data. */
  heldOut: boolean;
  /** Starts the run's progress lines. */
  head: string;
  /** performance.now() when this sitting took the run up (its wall-clock time ends with the record). */
  started: number;
}

/** What a trainer's report is given: the study's records of the ledger and where the report goes. */
export interface ReportArgs<R extends StudyRecord> {
  dir: string;
  study: string;
  records: R[];
  /** The ledger, relative to `dir` (the report names it). */
  source: string;
  /** The study file, when the report was asked for by it (not by a ledger). */
  spec: StudySpec | undefined;
  /** --data-dir of `study report`, if given. */
  dataDir: string | undefined;
}

/**
 * A trainer of study runs. `P` is its planned run, `R` its ledger record. A run's folder is `<runs>/<key>`
 * ({@link runDirOf}); a trainer writes into it what its own train command writes.
 */
export interface StudyTrainer<P extends PlannedRun, R extends StudyRecord> {
  /** The program, as messages name it (e.g. 'grassflow-lm'); `<program> study job` runs a queued run. */
  program: string;
  /** The flags a study file may set. */
  flags: StudyFlags;
  /** The trainer's ledger records. */
  ledger: LedgerFormat<R>;
  /**
   * Plan one run from its flags and the sitting's train flags (every check that needs no data; UsageError for bad
   * flags, which the study prefixes with the file and the entry).
   */
  plan(entry: StudyEntry, sitting: readonly string[]): Promise<P>;
  /** The key an existing run folder's config resolves to with the sitting's train flags (checked before a resume). */
  storedKey(runDir: string, sitting: readonly string[]): Promise<string>;
  /** Train a planned run afresh in `runDir`; the exit code (0: finished). */
  start(planned: P, runDir: string): Promise<number>;
  /** Resume the run in `runDir` from its checkpoint with the sitting's train flags; the exit code. */
  resume(planned: P, runDir: string, sitting: readonly string[]): Promise<number>;
  /** The ledger record of a finished run folder (with its held-out scores when asked for). */
  record(a: RecordArgs<P>): Promise<R>;
  /** The record as this study names the run: a queued job's result may come from another study with that run. */
  asStudyRecord(r: R, planned: P, study: string): R;
  /** What the sitting says when a run is recorded (e.g. 'final val PPL 12.34, best 12.30'). */
  describe(r: R): string;
  /** Write the report of the records into `dir`; returns its path. */
  report(a: ReportArgs<R>): Promise<string>;
}
