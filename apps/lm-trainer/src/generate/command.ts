// `grassflow-lm generate`: sample a continuation of a prompt from a checkpoint.
import { parseFlags, startBackend, planCommand, type FlagSpecs, type CliCommand } from '@grassflow/training';
import {
  checkpointSourceOf,
  CHECKPOINT_FLAGS,
  loadModelAndTokenizer,
  type CheckpointSource,
} from '../shared/checkpoint-dir.js';
import { checkTokenIds } from '@grassflow/gpu-layers';
import { generateIds, type SampleOptions } from './generate.js';

const GENERATE_FLAGS = {
  checkpoint: CHECKPOINT_FLAGS.checkpoint,
  prompt: { type: 'string', metavar: 'TEXT', default: 'the', help: 'text to continue' },
  'max-tokens': { type: 'int', min: 1, default: 40, help: 'tokens to generate' },
  temperature: { type: 'float', min: 0, default: 1.0, help: 'softmax temperature (0: greedy)' },
  'top-k': { type: 'int', min: 0, default: 40, help: 'sample among the k most likely tokens (0: all)' },
  seed: { type: 'int', min: 0, max: 0xffffffff, default: 1, help: 'sampling seed (same seed, same text)' },
  'slide-keep': {
    type: 'int',
    min: 1,
    help:
      "when the model's positional table (maxLen) is full, restart from the last N tokens " +
      '(default maxLen: always the full window, one full pass per token from then on)',
  },
  tokenizer: CHECKPOINT_FLAGS.tokenizer,
  'data-dir': CHECKPOINT_FLAGS['data-dir'],
  backend: CHECKPOINT_FLAGS.backend,
} as const satisfies FlagSpecs;

/** What `generate` does, resolved once from its flags. */
export interface GeneratePlan {
  source: CheckpointSource;
  prompt: string;
  sampling: SampleOptions;
}

export function planGenerate(argv: readonly string[]): GeneratePlan {
  const f = parseFlags(argv, GENERATE_FLAGS);
  const slideKeep = f['slide-keep'];
  return {
    source: checkpointSourceOf(f),
    prompt: f.prompt,
    sampling: {
      maxTokens: f['max-tokens'],
      temperature: f.temperature,
      topK: f['top-k'],
      seed: f.seed,
      ...(slideKeep === undefined ? {} : { slideKeep }),
    },
  };
}

/** Print the prompt and its continuation. */
export async function runGeneratePlan(plan: GeneratePlan): Promise<number> {
  await startBackend(plan.source.backend);
  const { model, tok } = await loadModelAndTokenizer(
    plan.source.checkpoint,
    plan.source.dataDir,
    plan.source.tokenizer,
  );
  try {
    const prompt = await tok.encodePrompt(plan.prompt);
    checkTokenIds(prompt, model.config.vocabSize); // where ids enter: the forward pass does not read them back
    const out = await generateIds(model, prompt, plan.sampling);
    process.stdout.write(`${tok.decode(Int32Array.from([...prompt, ...out]))}\n`);
    return 0;
  } finally {
    model.dispose();
  }
}

const USAGE =
  'grassflow-lm generate --checkpoint DIR --prompt TEXT [--max-tokens N --temperature T --top-k K --seed S --slide-keep N]';
const DESCRIPTION =
  'Sample a continuation of the prompt; deterministic for a seed. The prompt is read in one pass, then each token is ' +
  'one incremental decoding step (Grassmann: a constant-size state of the last max(offset) reduced states per layer; ' +
  'Transformer: a key/value cache).';

/** `generate`: flags → plan (once) → run; `--help` prints the flags. */
export const generateCli: CliCommand = planCommand({
  usage: USAGE,
  description: DESCRIPTION,
  flags: GENERATE_FLAGS,
  help: 'sample a continuation of a prompt',
  plan: planGenerate,
  run: runGeneratePlan,
});

/** `generate` on argv; returns the exit code. */
export const generateCommand = generateCli.run;
