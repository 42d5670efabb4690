// Throughput of both tokenizers on Wikitext-2 train: tokens/s, MB/s, seconds (median of RUNS runs after two warm-ups).
// Run: GRASSFLOW_DATA_DIR=/path/to/shared/data pnpm --filter @grassflow/tokenizers bench
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { WordLevelTokenizer, WordPieceTokenizer } from '../src/index.js';

const RUNS = 5;

const envDir = process.env['GRASSFLOW_DATA_DIR'];
if (envDir === undefined || envDir === '') {
  console.error(
    'bench: GRASSFLOW_DATA_DIR is unset. Set it to the data folder that holds wikitext-2/wiki.train.tokens and ' +
      'bert-vocab/vocab.txt, e.g. GRASSFLOW_DATA_DIR=/work/shared/data pnpm --filter @grassflow/tokenizers bench',
  );
  process.exit(2);
}
const dataDir = resolve(envDir);
const trainPath = join(dataDir, 'wikitext-2/wiki.train.tokens');
const vocabPath = join(dataDir, 'bert-vocab/vocab.txt');

/** Median wall time (s) of `runs` calls after two warm-up calls (so the JIT has settled), and the last result. */
async function time<T>(runs: number, fn: () => T | Promise<T>): Promise<{ seconds: number; result: T }> {
  await fn();
  let result = await fn();
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    result = await fn();
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return { seconds: times[Math.floor(times.length / 2)]!, result };
}

const bytes = readFileSync(trainPath);
const text = bytes.toString('utf8');
const MB = bytes.length / 1e6;
const rows: string[][] = [];
/** A table row; `tokens` 0 = not a token-producing task, `mb` 0 = not reading the corpus (shown as –). */
const row = (what: string, tokens: number, seconds: number, mb = MB): void => {
  rows.push([
    what,
    tokens > 0 ? tokens.toLocaleString('en-US') : '–',
    seconds.toFixed(3),
    tokens > 0 ? (tokens / seconds / 1e6).toFixed(2) : '–',
    mb > 0 ? (mb / seconds).toFixed(1) : '–',
  ]);
};

console.log(
  `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), median of ${RUNS} runs`,
);
console.log(`load average at the start (1 min): ${loadavg()[0]!.toFixed(2)} (other processes slow the numbers down)`);
console.log(`corpus: ${trainPath} (${MB.toFixed(2)} MB)\n`);

const build = await time(RUNS, () => WordLevelTokenizer.fromCorpus(bytes));
const wl = build.result;
row('word-level: build vocabulary (33,278 types)', 0, build.seconds);
const wlEnc = await time(RUNS, () => wl.encode(bytes));
row('word-level: encode (bytes in, Int32Array out)', wlEnc.result.length, wlEnc.seconds);
const wlStr = await time(RUNS, () => wl.encode(text));
row('word-level: encode (string in)', wlStr.result.length, wlStr.seconds);
const wlDec = await time(RUNS, () => wl.decode(wlEnc.result));
row('word-level: decode (round trip)', wlEnc.result.length, wlDec.seconds);

const wpBuild = await time(RUNS, () => WordPieceTokenizer.fromVocabFile(vocabPath));
row('wordpiece: build from vocab.txt', 0, wpBuild.seconds, 0);
const wp = wpBuild.result;
const wpEnc = await time(RUNS, () => wp.encodeCorpus(text));
row('wordpiece: encodeCorpus (Rust encodeBatch, 2048 lines)', wpEnc.result.length, wpEnc.seconds);
const wpDec = await time(3, () => wp.decode(wpEnc.result));
row('wordpiece: decode all ids (sync)', wpEnc.result.length, wpDec.seconds);

const header = ['task', 'tokens', 'seconds', 'M tokens/s', 'MB/s'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]): string =>
  `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
console.log(`load average at the end (1 min): ${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores\n`);
console.log(line(header));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|')}|`);
for (const r of rows) console.log(line(r));
