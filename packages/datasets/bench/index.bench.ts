// Bench: token-id cache load vs encoding Wikitext-2 train, hashing, and one epoch of LM batches.
// Run: GRASSFLOW_DATA_DIR=/path/to/data pnpm --filter @grassflow/datasets bench
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  encodeLines,
  LmTrainBatcher,
  loadWikitextIds,
  loadWikitextText,
  wikitextPath,
  type TextEncoderLike,
} from '../src/index.js';
import { sha256File } from '@grassflow/checkpoints';

async function time<T>(label: string, reps: number, fn: () => Promise<T> | T): Promise<T> {
  let out: T | undefined;
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    out = await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(56)} median ${(ms[Math.floor(ms.length / 2)] as number).toFixed(1).padStart(8)} ms  (min ${(ms[0] as number).toFixed(1)}, ${reps} runs)`,
  );
  return out as T;
}

async function main(): Promise<void> {
  const { text } = await loadWikitextText('train', { download: false });
  const vocab = new Map<string, number>();
  for (const w of text.split(/[ \t\n\r\f\v]+/)) if (w !== '' && !vocab.has(w)) vocab.set(w, vocab.size);
  const eos = vocab.size;
  // a plain word → id map: the encoding cost measured here is a floor; real tokenizers cost more
  const encoder: TextEncoderLike = {
    id: 'bench-word-level',
    encode: (line) =>
      line
        .split(/[ \t\r\f\v]+/)
        .filter((w) => w !== '')
        .map((w) => vocab.get(w) ?? 0),
  };
  const cacheDir = await mkdtemp(join(tmpdir(), 'gf-bench-'));
  try {
    console.log(`node ${process.version}, wiki.train.tokens (${text.length.toLocaleString('en')} chars)`);
    await time('sha256 of wiki.train.tokens (10.8 MB)', 5, () => sha256File(wikitextPath('train')));
    const ids = await time('encodeLines with a word → id map (2,088,628 ids)', 3, () =>
      encodeLines(text, encoder, { eolIds: [eos] }),
    );
    await time('loadWikitextIds, cache write (miss)', 1, () =>
      loadWikitextIds('train', encoder, { cacheDir, eolIds: [eos], download: false }),
    );
    const hit = await time('loadWikitextIds, cache load (hit, incl. read + sha256)', 5, () =>
      loadWikitextIds('train', encoder, { cacheDir, eolIds: [eos], download: false }),
    );
    if (hit.cache !== 'hit' || hit.ids.length !== ids.length) throw new Error('cache did not hit');
    await time('one epoch of LmTrainBatcher (L=128, B=32)', 3, () => {
      const b = new LmTrainBatcher(ids, { seqLen: 128, batchSize: 32, seed: 1 });
      let n = 0;
      for (const batch of b.epochBatches()) n += batch.targetCount;
      return n;
    });
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  console.error('The bench needs wikitext-2/wiki.train.tokens: set GRASSFLOW_DATA_DIR to the data folder.');
  process.exitCode = 1;
});
