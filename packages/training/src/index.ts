// @grassflow/training: the training pieces shared by the grassflow apps, written once against tfjs.
export {
  AdamW,
  defaultDecayFilter,
  type AdamWOptions,
  type AdamWApplyOptions,
  type AdamWState,
  type NamedVariable,
} from './adamw.js';
export { warmupCosineLr, type WarmupCosineOptions } from './lr-schedule.js';
export { clipByGlobalNorm, globalNorm, clipFactor } from './clip.js';
export {
  trainStep,
  NonFiniteLossError,
  type StepLoss,
  type TrainStepOptions,
  type TrainStepResult,
} from './train-step.js';
export { TrainingRng, withSeededRandom } from './rng.js';
export { namedParameters } from './named-params.js';
export { ParamStore, type Init } from './param-store.js';
export {
  saveTrainerCheckpoint,
  loadTrainerCheckpoint,
  saveModelCheckpoint,
  loadModelCheckpoint,
  TrainerCheckpointError,
  type TrainerState,
  type LoadedTrainerCheckpoint,
  type LoadedModelCheckpoint,
  type Checkpointable,
  type TrainableModel,
  type BuildOptions,
} from './trainer-checkpoint.js';
export {
  checkWritableFolder,
  OUTPUT_MARKER_FILE,
  prepareOutputFolder,
  refuseOutputPlace,
  type OutputFolderOptions,
} from './run/out-folder.js';
export { lockedByOther, lockRunFolder, releaseRunLocks, RUN_LOCK_FILE, type RunLockOwner } from './run/lock.js';
export { loadCheckpointToResume } from './run/resume-checkpoint.js';
export {
  RunFolder,
  type RunSink,
  gitCommit,
  writeJsonAtomic,
  metricColumns,
  metricsCsv,
  csvLine,
  type MetricRecord,
} from './run-folder.js';
export { StopSignal } from './stop-signal.js';
export { superviseSelf, isSupervised, SUPERVISED_ENV, STOP_GRACE_ENV } from './supervise.js';
export {
  Progress,
  formatDuration,
  formatTrainLine,
  type ProgressStream,
  type ProgressUpdate,
  type EvalProgressUpdate,
} from './progress.js';
export {
  evaluatePerplexity,
  positionBandEdges,
  LmTrainTask,
  type Perplexity,
  type PerplexityOptions,
} from './lm-task.js';
export {
  trainLanguageModel,
  DEFAULT_LM_OPTIMIZER,
  type CorpusEncoder,
  type LanguageModelRunFolder,
  type TrainLanguageModelOptions,
  type TrainLanguageModelResult,
} from './train-language-model.js';
export {
  earlyStopDecision,
  describeEarlyStop,
  checkEarlyStopRule,
  DEFAULT_EARLY_STOP,
  type EarlyStopRule,
  type EarlyStopDecision,
} from './early-stop.js';
export {
  runTraining,
  runExitCode,
  describeRunEnd,
  defaultPrintEvery,
  type EvalProgress,
  type TrainTask,
  type TrainLoopOptions,
  type TrainLoopResult,
} from './train-loop.js';
export { renderLineChart, lineChartSpec, type LineChart, type ChartSeries } from './charts.js';
export {
  renderChartSpec,
  heatmapChartSpec,
  renderHeatmapChart,
  histogramBins,
  histogramChartSpec,
  renderHistogramChart,
  type HeatmapChart,
  type HistogramBins,
  type HistogramChart,
} from './charts.js';
export { writeReport, markdownTable, formatCell, type Report, type ReportTable } from './report.js';
export {
  explicitFlags,
  checkResumeFlags,
  RESUME_FLAGS,
  optimizerFlagSpecs,
  autoWarmup,
  warmupSteps,
  warmupWarning,
  OPTIMIZER_FLAG_SPECS,
  optimizerConfigFrom,
  createOptimizer,
  lrSchedule,
  runProvenance,
  backendLine,
  checkNewRunFolder,
  createRun,
  openRunToResume,
  resolveCheckpointDir,
  trainRun,
  type OptimizerConfig,
  type OptimizerFlags,
  type RunProvenance,
  type OpenedRun,
  type RunControl,
  type ResumePoint,
  type RunStart,
  type ResumableTask,
  type TrainRunOptions,
  type TrainRunOutcome,
  type RunOutcome,
} from './run/lifecycle.js';
export {
  summariseRun,
  metricCurve,
  metricOf,
  trainingLossChart,
  learningRateChart,
  gradNormChart,
  reportRun,
  evalMetricChart,
  type RunSummary,
  type ReportChart,
} from './run/summary.js';
export {
  argvWithConfigFile,
  parseFlags,
  formatHelp,
  UsageError,
  type FlagSpec,
  type FlagSpecs,
  type ParsedFlags,
} from './flags.js';
export {
  runCli,
  cliMain,
  cliHelp,
  planCommand,
  wantsHelp,
  startBackend,
  KNOWN_ERROR_NAMES,
  DEBUG_ENV,
  type CliCommand,
  type CliOptions,
  type PlanCommand,
} from './cli.js';
