// An export folder as a model you can use: model + tokenizer + text in, text out. gpu-layers' loadPretrained gives the
// model and the tokenizer's files; the tokenizer is built here because gpu-layers may not depend on
// @grassflow/tokenizers (README.md, "Data flows one way"), and this package is where both meet today.
import { appSlideKeep, checkTokenIds, loadPretrained, sampleIds, type LanguageModel } from '@grassflow/gpu-layers';
import { TrainingRng, UsageError } from '@grassflow/training';
import { tokenizerOfPretrained, type CorpusTokenizer } from '../shared/corpus.js';
import { generateIds, type SampleOptions } from '../generate/generate.js';

/** Sampling options of {@link Pretrained.generate}: `grassflow-lm generate`'s flags, with its defaults. */
export interface GenerateTextOptions {
  /** Tokens to generate (default 40). */
  maxTokens?: number;
  /** Softmax temperature, 0: greedy (default 1). */
  temperature?: number;
  /** Sample among the k most likely tokens, 0: all (default 40). */
  topK?: number;
  /** Sampling seed (default 1): the same seed gives the same text as `grassflow-lm generate --seed`. */
  seed?: number;
  /** Tokens kept when the positional table is full (default maxLen/2, as the CLI). */
  slideKeep?: number;
}

/** A loaded export folder. */
export interface Pretrained {
  readonly model: LanguageModel;
  readonly tokenizer: CorpusTokenizer;
  /** The prompt (as the tokenizer reads it back) and its continuation: what `grassflow-lm generate` prints. */
  generate(text: string, options?: GenerateTextOptions): Promise<string>;
  /** The same text in pieces as they are sampled: first the prompt, then one piece per token (may be empty). */
  stream(text: string, options?: GenerateTextOptions): AsyncGenerator<string, void, undefined>;
  /** Frees the model's tensors. */
  dispose(): void;
}

/**
 * Loads an export folder (`grassflow-lm export RUN --out DIR`) for text in, text out. Initialize a backend first
 * (initBackend of @grassflow/gpu-layers).
 */
export async function fromPretrained(dir: string): Promise<Pretrained> {
  const loaded = await loadPretrained(dir);
  let tokenizer: CorpusTokenizer;
  try {
    tokenizer = tokenizerOfPretrained(loaded.dir, loaded.tokenizer);
    if (tokenizer.vocabSize !== loaded.config.vocabSize) {
      throw new UsageError(
        `${loaded.dir}: the tokenizer has ${tokenizer.vocabSize} tokens, the model vocabSize ${loaded.config.vocabSize}`,
      );
    }
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
  const model = loaded.model;
  const optionsOf = (o: GenerateTextOptions): SampleOptions => ({
    maxTokens: o.maxTokens ?? 40,
    temperature: o.temperature ?? 1,
    topK: o.topK ?? 40,
    seed: o.seed ?? 1,
    slideKeep: o.slideKeep ?? appSlideKeep(model.config.maxLen),
  });
  const promptOf = async (text: string): Promise<Int32Array> => {
    const ids = await tokenizer.encodePrompt(text);
    checkTokenIds(ids, model.config.vocabSize);
    return ids;
  };
  return {
    model,
    tokenizer,
    async generate(text, options = {}) {
      const prompt = await promptOf(text);
      const out = await generateIds(model, prompt, optionsOf(options));
      return tokenizer.decode(Int32Array.from([...prompt, ...out]));
    },
    async *stream(text, options = {}) {
      const opts = optionsOf(options);
      const prompt = await promptOf(text);
      const ids = Array.from(prompt);
      // Each piece is the growth of the decoded text: WordPiece joins '##' pieces to the word before, so decoding
      // token by token would put spaces inside words.
      let shown = tokenizer.decode(prompt);
      yield shown;
      if (prompt.length === 0) throw new UsageError('the prompt encodes to no tokens: give a non-empty prompt');
      for await (const id of sampleIds(model, prompt, opts, new TrainingRng(opts.seed))) {
        ids.push(id);
        const text = tokenizer.decode(Int32Array.from(ids));
        const piece = text.startsWith(shown) ? text.slice(shown.length) : '';
        shown += piece;
        yield piece;
      }
    },
    dispose: () => model.dispose(),
  };
}
