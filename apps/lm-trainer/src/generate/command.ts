// `grassflow-lm generate`: sample a continuation of a prompt from a checkpoint.
import { parseFlags, startBackend, planCommand, type FlagSpecs, type CliCommand } from '@grassflow/training';
import {
  checkpointSourceOf,
  CHECKPOINT_FLAGS,
  loadModelAndTokenizer,
  type CheckpointSource,
} from '../shared/checkpoint-dir.js';
import { appSlideKeep, checkTokenIds } from '@grassflow/gpu-layers';
import { ContinuationStream } from '@grassflow/tokenizers';
import { streamIds, type SampleOptions } from './generate.js';

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
      "when the model's positional table (maxLen) is full, restart from the last N tokens (default maxLen/2: one " +
      'full pass every maxLen/2 tokens, each token seeing maxLen/2 … maxLen − 1 of context; maxLen: always the full ' +
      'window, as the full-forward sampler, at one full pass per token)',
  },
  threads: {
    type: 'int',
    min: 1,
    help:
      'wasm threads (default GRASSFLOW_WASM_THREADS, else 1: one token at a time is a chain of small kernels, ' +
      "which a thread pool's hand-offs slow down)",
  },
  json: {
    type: 'boolean',
    help:
      'JSON lines on stdout instead of text: {"prompt", "prompt_ids"}, then {"id", "token", "text"} per token as it ' +
      'is sampled, then {"text", "ids", "tokens", "seconds"}',
  },
  tokenizer: CHECKPOINT_FLAGS.tokenizer,
  'data-dir': CHECKPOINT_FLAGS['data-dir'],
  backend: CHECKPOINT_FLAGS.backend,
  trust: CHECKPOINT_FLAGS.trust,
} as const satisfies FlagSpecs;

/** What `generate` does, resolved once from its flags. */
export interface GeneratePlan {
  source: CheckpointSource;
  prompt: string;
  /** Without --slide-keep, runGeneratePlan sets it to half the model's maxLen. */
  sampling: SampleOptions;
  threads: number | undefined;
  /** --json: JSON lines instead of text. */
  json: boolean;
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
    threads: f.threads ?? (process.env['GRASSFLOW_WASM_THREADS'] ? undefined : 1),
    json: f.json === true,
  };
}

/**
 * Print the prompt, then each token's text as it is sampled (WordPiece pieces joined to their word, a new word after
 * the prompt's last one); with --json, one JSON line for the prompt, one per token and one at the end.
 */
export async function runGeneratePlan(plan: GeneratePlan): Promise<number> {
  await startBackend(plan.source.backend, plan.threads === undefined ? {} : { threads: plan.threads });
  const { model, tok } = await loadModelAndTokenizer(
    plan.source.checkpoint,
    plan.source.dataDir,
    plan.source.tokenizer,
    plan.source.trust,
  );
  try {
    const prompt = await tok.encodePrompt(plan.prompt);
    checkTokenIds(prompt, model.config.vocabSize); // where ids enter: the forward pass does not read them back
    const slideKeep = plan.sampling.slideKeep ?? appSlideKeep(model.config.maxLen);
    const write = (s: string) => process.stdout.write(s);
    const text = new ContinuationStream(tok, prompt);
    if (plan.json) write(`${JSON.stringify({ prompt: text.promptText, prompt_ids: Array.from(prompt) })}\n`);
    else write(text.promptText);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const out: number[] = [];
    for await (const id of streamIds(model, prompt, { ...plan.sampling, slideKeep })) {
      out.push(id);
      const piece = text.push(id);
      if (plan.json) write(`${JSON.stringify({ id, token: tok.idToToken(id) ?? null, text: piece })}\n`);
      else write(piece);
    }
    const sec = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSec = (cpu.user + cpu.system) / 1e6; // every thread of the process: on a loaded machine, what it used
    if (plan.json) {
      write(`${JSON.stringify({ text: text.text, ids: out, tokens: out.length, seconds: sec, cpuSeconds: cpuSec })}\n`);
    } else write('\n');
    process.stderr.write(
      `generate: ${out.length} tokens in ${sec.toFixed(2)} s (CPU ${cpuSec.toFixed(2)} s), ` +
        `${(out.length / sec).toFixed(1)} tokens/s ` +
        `(prompt of ${prompt.length} primed first; slide-keep ${slideKeep})\n`,
    );
    return 0;
  } finally {
    model.dispose();
  }
}

const USAGE =
  'grassflow-lm generate --checkpoint DIR|URL --prompt TEXT [--max-tokens N --temperature T --top-k K --seed S ' +
  '--slide-keep N] [--json]';
const DESCRIPTION =
  'Sample a continuation of the prompt, printed as each token is sampled; deterministic for a seed. The prompt is ' +
  'read in one pass, then each token is ' +
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
