// The one harness that runs a package README's TypeScript and JavaScript examples: each ```ts / ```js code block is
// written to a file inside the package (so that its imports resolve as a user's would, the package's own name to its
// src/ through the package's tsconfig paths) and run with tsx in a fresh Node process; it must exit with 0.
// A block that cannot run in a test (it needs a GPU, a browser or the network) is preceded by a line
// `<!-- example: not run (reason) -->`; the reason is required and shown in the test name.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** @typedef {{ index: number, line: number, lang: string, code: string, skip: string | undefined }} ReadmeExample */

const FENCE = /^```(ts|typescript|js|javascript|mjs|cjs)\s*$/;
const SKIP = /^<!--\s*example:\s*not run\s*\((.+)\)\s*-->\s*$/;

/**
 * The TypeScript/JavaScript code blocks of `packageDir`/README.md (or of another Markdown file there), in order.
 * @param {string} packageDir
 * @param {string} [file]
 * @returns {ReadmeExample[]}
 */
export function readmeExamples(packageDir, file = 'README.md') {
  const lines = readFileSync(join(packageDir, file), 'utf8').split('\n');
  /** @type {ReadmeExample[]} */
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i] ?? '');
    if (m === null) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    const before = lines.slice(Math.max(0, i - 2), i).find((l) => SKIP.test(l));
    out.push({
      index: out.length + 1,
      line: i + 1,
      lang: m[1] ?? 'ts',
      code: lines.slice(start, end).join('\n'),
      skip: before === undefined ? undefined : SKIP.exec(before)?.[1],
    });
    i = end;
  }
  return out;
}

/**
 * Runs one example in a fresh Node process (tsx, the package's tsconfig) whose working directory is a new empty
 * folder: relative paths an example writes (runs/…) land there, not in the package. With `cwd`, it runs there
 * instead and the folder is kept, so that examples meant to be run one after another (one writes a folder, the next
 * reads it) share it. CommonJS blocks (they call require) run as .cts, the rest as ES modules (.mts, top-level await
 * allowed).
 * @param {string} packageDir
 * @param {ReadmeExample} example
 * @param {{ timeoutMs?: number, env?: NodeJS.ProcessEnv, cwd?: string }} [options]
 * @returns {{ status: number | null, stdout: string, stderr: string }}
 */
export function runReadmeExample(packageDir, example, { timeoutMs = 180_000, env = {}, cwd: shared } = {}) {
  const dir = join(packageDir, '.readme-examples');
  mkdirSync(dir, { recursive: true });
  const cjs = example.lang === 'cjs' || /\brequire\(/.test(example.code);
  const file = join(dir, `example-${example.index}.${cjs ? 'cts' : 'mts'}`);
  writeFileSync(file, `${example.code}\n${cjs ? '' : 'export {};\n'}`);
  const cwd = shared ?? mkdtempSync(join(tmpdir(), 'grassflow-readme-'));
  try {
    const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), file], {
      cwd,
      encoding: 'utf8',
      timeout: timeoutMs,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(packageDir, 'tsconfig.json'), ...env },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(file, { force: true });
    if (shared === undefined) rmSync(cwd, { recursive: true, force: true });
  }
}
