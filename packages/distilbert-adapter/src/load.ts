// loadDistilBert: folder or hub id → verified files → config, weights, tokenizer → DistilBertEncoder.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { sha256File } from '@grassflow/checkpoints';
import { WordPieceTokenizer } from '@grassflow/tokenizers';
import { parseDistilBertConfig } from './config.js';
import { DistilBertEncoder, type EncoderMode } from './encoder.js';
import { DistilBertError } from './errors.js';
import { FeatureCache } from './feature-cache.js';
import { resolveCacheDir, resolveModelFiles, type ResolveOptions } from './hub-files.js';
import { readDistilBertWeights } from './weights.js';

/** Options of {@link loadDistilBert}: the hub settings (per-call overrides) plus how to build the encoder. */
export interface LoadDistilBertOptions extends ResolveOptions {
  /** 'frozen' (default): constant weights, no gradients; 'trainable': weights are tf.Variables. */
  mode?: EncoderMode;
  /**
   * Frozen mode: cache features per example on disk for `forwardCached`. `true` uses
   * `<cacheDir>/features`; a string is the folder. Default: no cache.
   */
  featureCache?: boolean | string;
  /**
   * Lowercase and strip accents in the tokenizer. Default: `do_lower_case` of a tokenizer_config.json in
   * the folder, else false when the folder or id names a cased model (`…-cased`), else true.
   */
  lowercase?: boolean;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function lowercaseOf(dir: string, name: string, option: boolean | undefined): Promise<boolean> {
  if (option !== undefined) return option;
  try {
    const cfg = JSON.parse(await readFile(join(dir, 'tokenizer_config.json'), 'utf8')) as { do_lower_case?: unknown };
    if (typeof cfg.do_lower_case === 'boolean') return cfg.do_lower_case;
  } catch {
    // no tokenizer_config.json: decide by the name
  }
  return !/(?:^|[-_/])cased(?:$|[-_/])/i.test(name);
}

/**
 * Load a DistilBERT encoder from a Hugging Face model folder (config.json, vocab.txt, model.safetensors)
 * or a hub id (`distilbert-base-uncased`, `distilbert/distilbert-base-uncased`, …), looked up as:
 * explicit folder, cache, then download (see `resolveModelFiles`). The weights are checked against
 * config.json before use; the encoder computes HF `DistilBertModel`'s last_hidden_state.
 */
export async function loadDistilBert(
  dirOrModelId: string,
  options: LoadDistilBertOptions = {},
): Promise<DistilBertEncoder> {
  const mode = options.mode ?? 'frozen';
  if (mode !== 'frozen' && mode !== 'trainable')
    throw new DistilBertError('INVALID_ARGUMENT', `mode must be 'frozen' or 'trainable', got '${String(mode)}'`);
  if (options.featureCache !== undefined && options.featureCache !== false && mode !== 'frozen') {
    throw new DistilBertError(
      'INVALID_ARGUMENT',
      'featureCache needs mode: "frozen" (trainable weights change, so their features cannot be cached)',
    );
  }
  const files = await resolveModelFiles(dirOrModelId, options);
  const configPath = join(files.dir, 'config.json');
  const configText = await readFile(configPath, 'utf8');
  const config = parseDistilBertConfig(configText, configPath);
  const weightsPath = join(files.dir, 'model.safetensors');
  const report = await readDistilBertWeights(weightsPath, config);

  const lowercase = await lowercaseOf(files.dir, files.repo ?? basename(files.dir), options.lowercase);
  const vocabPath = join(files.dir, 'vocab.txt');
  const tokenizer = (await isFile(vocabPath))
    ? WordPieceTokenizer.fromVocabFile(vocabPath, { lowercase })
    : WordPieceTokenizer.fromTokenizerJson(join(files.dir, 'tokenizer.json'));
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new DistilBertError(
      'INVALID_CONFIG',
      `${configPath}: vocab_size is ${config.vocabSize} but the tokenizer has ${tokenizer.vocabSize} tokens; ids ≥ ${config.vocabSize} would have no embedding: the vocabulary does not belong to this model`,
      { file: configPath },
    );
  }

  let featureCache: FeatureCache | undefined;
  if (options.featureCache !== undefined && options.featureCache !== false) {
    const root =
      typeof options.featureCache === 'string' ? options.featureCache : join(resolveCacheDir(options), 'features');
    const weightsSha = files.weightsSha256 ?? (await sha256File(weightsPath));
    const identity = createHash('sha256')
      .update(`distilbert-adapter/1\n${weightsSha}\n`)
      .update(configText)
      .digest('hex');
    featureCache = new FeatureCache(root, identity, config.dim);
  }
  return new DistilBertEncoder({
    config,
    weights: report.weights,
    tokenizer,
    mode,
    ...(featureCache !== undefined ? { featureCache } : {}),
    info: {
      dir: files.dir,
      source: files.source,
      ...(files.repo !== undefined ? { repo: files.repo } : {}),
      ...(files.revision !== undefined ? { revision: files.revision } : {}),
      prefix: report.prefix,
      ignoredTensors: report.ignoredTensors,
      widened: report.widened,
      computedPositionTable: report.computedPositionTable,
    },
  });
}
