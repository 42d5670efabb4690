// `grassflow-snli params`: the two heads' parameter counts side by side (analytic; equal to the built models, tested).
import { markdownTable, parseFlags, planCommand, type CliCommand, type FlagSpecs } from '@grassflow/training';
import type { EmbeddingEncoderConfig } from '../model/embedding-encoder.js';
import { countParams, HEAD_KINDS, modelConfig } from '../model/snli-model.js';

const FLAGS = {
  'input-dim': {
    type: 'int',
    min: 1,
    default: 64,
    help: 'width of the backbone features (768 for distilbert-base-uncased, 64 for --backbone none)',
  },
  'vocab-size': {
    type: 'int',
    min: 0,
    default: 30522,
    help: "vocabulary of the embedding encoder (backbone 'none'; 0: no encoder)",
  },
  'max-len': { type: 'int', min: 1, default: 48, help: 'positions of the embedding encoder' },
} as const satisfies FlagSpecs;

/** What `params` prints: the heads over features of `inputDim`, with the embedding encoder (or none). */
export interface ParamsPlan {
  inputDim: number;
  embedding: EmbeddingEncoderConfig | null;
}

export function planParams(argv: readonly string[]): ParamsPlan {
  const f = parseFlags(argv, FLAGS);
  const embedding =
    f['vocab-size'] > 0 ? { vocabSize: f['vocab-size'], dim: f['input-dim'], maxLen: f['max-len'] } : null;
  return { inputDim: f['input-dim'], embedding };
}

/** Print a markdown table: head, head parameters, trainable backbone parameters, total. */
export function runParamsPlan(plan: ParamsPlan): Promise<number> {
  const rows = HEAD_KINDS.map((k) => {
    const c = countParams(modelConfig(k, plan.inputDim, plan.embedding));
    return [k, c.head, c.backbone, c.total];
  });
  const columns = ['head', 'head params', 'embedding encoder params', 'total trainable'];
  process.stdout.write(`${markdownTable({ columns, rows })}\n`);
  return Promise.resolve(0);
}

/** `params`: flags → plan (once) → run; `--help` prints the flags. */
export const paramsCli: CliCommand = planCommand({
  usage: 'grassflow-snli params [--input-dim D] [--vocab-size V]',
  description: 'Parameter counts of the Grassmann–Plücker and Transformer heads side by side.',
  flags: FLAGS,
  help: 'parameter counts of the two heads side by side',
  plan: planParams,
  run: runParamsPlan,
});
