// Resolve --checkpoint: a checkpoint folder, or a run folder (its best, else latest checkpoint).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCheckpoint, type LanguageModel } from '@grassflow/gpu-layers';
import { UsageError } from '@grassflow/training';
import { loadTokenizer, type CorpusTokenizer, type TokenizerKind } from './corpus.js';

/** A checkpoint folder from --checkpoint: DIR itself, or DIR/checkpoints/best, or DIR/checkpoints/latest for a run folder. */
export function resolveCheckpointDir(dir: string): string {
  if (!existsSync(dir)) throw new UsageError(`--checkpoint ${dir} does not exist`, 'checkpoint');
  const cfg = join(dir, 'config.json');
  if (existsSync(cfg)) {
    try {
      const parsed = JSON.parse(readFileSync(cfg, 'utf8')) as { format?: string };
      if (parsed.format === 'grassflow-lm-run') {
        for (const c of ['best', 'latest']) if (existsSync(join(dir, 'checkpoints', c))) return join(dir, 'checkpoints', c);
        throw new UsageError(`--checkpoint ${dir} is a run folder without checkpoints yet`, 'checkpoint');
      }
    } catch (err) {
      if (err instanceof UsageError) throw err;
      // not JSON: let loadCheckpoint report the corrupt config.json
    }
  }
  return dir;
}

/** Load a model checkpoint and the tokenizer it was trained with (from its `extra.run`, or `tokenizerFlag`). */
export async function loadModelAndTokenizer(
  checkpoint: string,
  dataDir: string,
  tokenizerFlag: string | undefined,
): Promise<{ model: LanguageModel; tok: CorpusTokenizer; dir: string }> {
  const dir = resolveCheckpointDir(checkpoint);
  const ck = await loadCheckpoint(dir);
  for (const t of ck.extraTensors.values()) t.dispose();
  const run = ck.extra['run'] as { tokenizer?: string; tokenizerId?: string } | undefined;
  const kind = (tokenizerFlag ?? run?.tokenizer) as TokenizerKind | undefined;
  if (kind === undefined) {
    ck.model.dispose();
    throw new UsageError(`${dir} does not record its tokenizer (not written by grassflow-lm): pass --tokenizer wordpiece|word`, 'tokenizer');
  }
  const tok = await loadTokenizer(kind, dataDir);
  if (run?.tokenizerId !== undefined && tokenizerFlag === undefined && run.tokenizerId !== tok.id) {
    ck.model.dispose();
    throw new UsageError(`${dir} was trained with tokenizer ${run.tokenizerId}, but the data folder gives ${tok.id}: use the same data folder`, 'data-dir');
  }
  if (tok.vocabSize !== ck.config.vocabSize) {
    ck.model.dispose();
    throw new UsageError(`tokenizer ${kind} has ${tok.vocabSize} tokens but the model has vocabSize ${ck.config.vocabSize}`, 'tokenizer');
  }
  return { model: ck.model, tok, dir };
}
