// OpenBLAS's kernels chosen by grassflow: where OpenBLAS falls back to a core without AVX2 on a CPU with AVX2 or
// AVX-512F, the library is loaded again under the better OPENBLAS_CORETYPE, its products equal XNNPACK's, and the
// user's own OPENBLAS_CORETYPE always wins. Each case in a fresh Node process (OpenBLAS reads the variable at load).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { betterOpenblasCore, cpuFeatures, parseCpuinfo } from '../src/backend/openblas-core.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const haveBlas =
  existsSync('/usr/lib/x86_64-linux-gnu/libopenblas.so.0') || process.env['GRASSFLOW_REQUIRE_BLAS'] === '1';
const off = /^(off|0|false|none|xnnpack)$/i.test(process.env['GRASSFLOW_BLAS'] ?? '');

const XEON = [
  'processor\t: 0',
  'vendor_id\t: GenuineIntel',
  'cpu family\t: 6',
  'model\t\t: 207',
  'model name\t: Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz',
  'flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c avx2 fma avx512f avx512dq avx512bw amx_tile',
  '',
  'processor\t: 1',
].join('\n');

describe('the kernel choice', () => {
  it('reads vendor, model and vector extensions from /proc/cpuinfo', () => {
    expect(parseCpuinfo(XEON)).toEqual({
      vendor: 'intel',
      model: 'Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz',
      avx2: true,
      avx512f: true,
    });
    expect(parseCpuinfo('processor\t: 0\nBogoMIPS\t: 50.00\n')).toBeUndefined(); // an ARM machine: no x86 flags
  });

  it('replaces a generic core by the widest the CPU runs, and keeps every other choice', () => {
    const intel512 = { vendor: 'intel', model: 'x', avx2: true, avx512f: true } as const;
    const intel2 = { ...intel512, avx512f: false };
    const amd = { ...intel512, vendor: 'amd' } as const;
    const old = { ...intel512, avx2: false, avx512f: false };
    expect(betterOpenblasCore('Prescott', intel512)).toBe('SkylakeX');
    expect(betterOpenblasCore('Core2', intel2)).toBe('Haswell');
    expect(betterOpenblasCore('Nehalem', intel2)).toBe('Haswell');
    expect(betterOpenblasCore('Sandybridge', intel512)).toBe('SkylakeX');
    expect(betterOpenblasCore('Prescott', amd)).toBe('Zen');
    expect(betterOpenblasCore('Prescott', old)).toBeUndefined(); // the CPU has no AVX2: Prescott is right
    for (const core of ['Haswell', 'SkylakeX', 'Cooperlake', 'Zen', 'SapphireRapids'])
      expect(betterOpenblasCore(core, intel512)).toBeUndefined();
  });
});

/** Runs a script against the package's source in a fresh Node process; its last stdout line, parsed. */
function inFreshProcess(lines: string[], env: Record<string, string | undefined>): Record<string, unknown> {
  const script = [
    `import * as tf from '@tensorflow/tfjs-core';`,
    `import { initBackend, blasInfo, useNativeProducts } from ${JSON.stringify(join(packageDir, 'src/index.ts'))};`,
    `import { simulateOpenblasDetection } from ${JSON.stringify(join(packageDir, 'src/backend/wasm-blas.ts'))};`,
    ...lines,
  ].join('\n');
  const childEnv: Record<string, string | undefined> = { ...process.env, GRASSFLOW_BLAS: '', ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: packageDir,
    encoding: 'utf8',
    timeout: 90_000,
    env: childEnv,
  });
  expect(child.error, child.stderr).toBeUndefined();
  expect(child.status, child.stderr).toBe(0);
  return { ...(JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as object), stderr: child.stderr };
}

const cpu = cpuFeatures();
const target = cpu === undefined ? undefined : betterOpenblasCore('Prescott', cpu);

describe.skipIf(!haveBlas || off || target === undefined)('OpenBLAS under a generic detection', () => {
  it('loads the better kernels by itself, says so once, and its products equal XNNPACK on the model shapes', () => {
    const out = inFreshProcess(
      [
        `simulateOpenblasDetection('Prescott');`,
        `const info = await initBackend({ backend: 'wasm' });`,
        // [B·L, d]·[d, r], the FFN, the tied head x·Eᵀ, a weight gradient Aᵀ·B, q·kᵀ over B·H
        `const shapes = [[[256, 64], [64, 16], false, false], [[256, 64], [64, 256], false, false],`,
        `  [[256, 64], [8192, 64], false, true], [[256, 64], [256, 96], true, false], [[32, 128, 16], [32, 128, 16], false, true]];`,
        `let worst = 0;`,
        `for (const [sa, sb, ta, tb] of shapes) {`,
        `  const a = tf.randomNormal(sa, 0, 1, 'float32', 1), b = tf.randomNormal(sb, 0, 1, 'float32', 2);`,
        `  const run = (on) => { useNativeProducts(on); return tf.matMul(a, b, ta, tb).dataSync(); };`,
        `  const native = run(true), stock = run(false); useNativeProducts(true);`,
        `  let d = 0, s = 1e-12; for (let i = 0; i < stock.length; i++) { d = Math.max(d, Math.abs(native[i] - stock[i]));`,
        `    s = Math.max(s, Math.abs(stock[i])); }`,
        `  worst = Math.max(worst, d / s);`,
        `}`,
        `console.log(JSON.stringify({ blas: info.blas, note: info.blasNote, core: blasInfo().core, worst,`,
        `  env: process.env.OPENBLAS_CORETYPE ?? null }));`,
      ],
      { OPENBLAS_CORETYPE: 'Haswell' }, // as a machine that sets it: the simulated detection stands in for it
    );
    expect(out['core']).toBe(target);
    expect(out['blas']).toMatch(new RegExp(`^openblas \\d+\\.\\d+\\.\\d+ ${target}, \\d+ threads?$`));
    expect(out['note']).toMatch(
      new RegExp(`^OpenBLAS detected Prescott on this .*; grassflow runs its ${target} kernels`),
    );
    expect(String(out['stderr']).split(String(out['note'])).length - 1).toBe(1); // printed once
    expect(out['worst']).toBeLessThan(1e-5);
    expect(out['env']).toBe('Haswell'); // restored: child processes make their own choice
  });

  it("keeps the user's OPENBLAS_CORETYPE, and OpenBLAS's detection under GRASSFLOW_BLAS_CORE=off", () => {
    const line = `console.log(JSON.stringify({ core: blasInfo().core, note: (await initBackend({ backend: 'wasm' })).blasNote ?? null }));`;
    expect(
      inFreshProcess([`await initBackend({ backend: 'wasm' });`, line], { OPENBLAS_CORETYPE: 'Prescott' }),
    ).toMatchObject({ core: 'Prescott', note: null });
    expect(
      inFreshProcess([`simulateOpenblasDetection('Prescott');`, `await initBackend({ backend: 'wasm' });`, line], {
        GRASSFLOW_BLAS_CORE: 'off',
      }),
    ).toMatchObject({ core: 'Prescott', note: null });
  });
});
