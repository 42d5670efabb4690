// @grassflow/studies: experiments on any trainer — study files, run keys, the ledger, statistics over seeds,
// reports, the sitting (in process or on Redis workers) and the `study` and `worker` commands.
export {
  expandStudy,
  flagsToArgv,
  parseStudy,
  studyFlagNames,
  type FlagValue,
  type RunFlags,
  type RunGrid,
  type StudyEntry,
  type StudyFlags,
  type StudySpec,
} from './spec.js';
export { canonicalJson, runKey } from './key.js';
export {
  pairedBootstrap,
  pairedDifferences,
  spread,
  tQuantile975,
  type BootstrapInterval,
  type BootstrapOptions,
  type Spread,
  type UnitSums,
} from './stats.js';
export {
  appendLedger,
  LedgerError,
  readLedger,
  thisMachine,
  type LedgerContents,
  type LedgerFormat,
  type Machine,
  type StudyRecord,
} from './ledger.js';
export {
  cellOf,
  cellPairs,
  groupBySeed,
  interval,
  kindFields,
  label,
  leaves,
  meanCurve,
  seedComparison,
  seedDifferences,
  varyingFields,
  withoutSeed,
  writeSeedReport,
  type MetricGroup,
  type MetricPair,
  type ReportMetric,
  type RunGroup,
  type SeedReport,
  type StudyConfig,
} from './report.js';
export type { PlannedRun, RecordArgs, ReportArgs, StudyTrainer } from './trainer.js';
export { checkRunFolderKey, folderState, planRun, runDirOf, trainStudyRun, type StudyRunOutcome } from './run.js';
export { InProcessQueue, type QueueOutcome, type RunQueue, type StudySitting } from './queue.js';
export {
  planSitting,
  planStudy,
  readStudy,
  runSitting,
  statusOfSitting,
  studyCli,
  studyLedger,
  type Sitting,
  type StudyCommandOptions,
} from './command.js';
export {
  QUEUE_ENV,
  QUEUE_NAME,
  QUEUE_PREFIX,
  QueueUnreachableError,
  probeRedis,
  queueUrlOf,
  redisConnection,
  type QueueUrl,
} from './queue/redis.js';
export { JOB_OPTIONS, STUDY_JOB, workerName, type StudyJobData, type StudyJobProgress } from './queue/jobs.js';
export { describeJob, jobWord, RedisRunQueue, type JobWord, type QueuedJob } from './queue/coordinator.js';
export {
  studyJobKind,
  workerCli,
  workerCommand,
  type JobChild,
  type JobContext,
  type JobKind,
  type WorkerOptions,
} from './queue/worker.js';
