// `grassflow-snli params`: the two heads' parameter counts side by side (analytic; equal to the built models, tested).
import { formatHelp, markdownTable, parseFlags, type FlagSpecs, type CliCommand } from '@grassflow/training';
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

/** Print a markdown table: head, head parameters, trainable backbone parameters, total. */
export async function paramsCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      `${formatHelp('grassflow-snli params [--input-dim D] [--vocab-size V]', 'Parameter counts of the Grassmann–Plücker and Transformer heads side by side.', FLAGS)}\n`,
    );
    return 0;
  }
  const f = parseFlags(argv, FLAGS);
  const emb = f['vocab-size'] > 0 ? { vocabSize: f['vocab-size'], dim: f['input-dim'], maxLen: f['max-len'] } : null;
  const rows = HEAD_KINDS.map((k) => {
    const c = countParams(modelConfig(k, f['input-dim'], emb));
    return [k, c.head, c.backbone, c.total];
  });
  process.stdout.write(
    `${markdownTable({ columns: ['head', 'head params', 'embedding encoder params', 'total trainable'], rows })}\n`,
  );
  return 0;
}

/** `grassflow-snli params` in the program's command table. */
export const paramsCli: CliCommand = { run: paramsCommand, help: 'parameter counts of the two heads side by side' };
