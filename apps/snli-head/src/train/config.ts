// The run's config.json (imported by run.ts, which trains, and report.ts, which writes the report).
import type { OptimizerConfig, RunProvenance } from '@grassflow/training';
import type { HeadKind, SnliModelConfig } from '../model/snli-model.js';

/** Training hyper-parameters (config.json `training`). */
export interface TrainingConfig extends OptimizerConfig {
  epochs: number;
  batch: number;
  seed: number;
  /** Tokens kept per sentence, [CLS] and [SEP] included. */
  seqLen: number;
  /** Validate every N steps (0: once per epoch). */
  evalEvery: number;
  logEvery: number;
}

/** config.json of a run folder: everything needed to repeat the run. */
export interface RunConfig extends RunProvenance {
  format: 'grassflow-snli-run';
  formatVersion: 1;
  command: string;
  head: HeadKind;
  backbone: string;
  model: SnliModelConfig;
  params: { head: number; backbone: number; total: number };
  training: TrainingConfig;
  totalSteps: number;
  data: {
    dataDir: string;
    trainFile: string;
    trainPairs: number;
    trainIsSample: boolean;
    validFile: string;
    validPairs: number;
    tokenizerId: string;
  };
}
