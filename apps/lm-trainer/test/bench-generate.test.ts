// `grassflow-lm bench --generate` at tiny size: the rows and their fields (never the timings).
import { describe, expect, it } from 'vitest';
import { defaultContexts, type GenerateBenchRow } from '../src/bench/generate.js';
import { cli } from './helpers.js';

describe('grassflow-lm bench --generate (tiny)', () => {
  it('--json: one line per model and context, with tokens/s, state bytes and the full-forward baseline', () => {
    const r = cli([
      'bench',
      '--generate',
      '--preset',
      'tiny',
      '--vocab',
      '64',
      '--contexts',
      '4,8,16',
      '--steps',
      '3',
      '--baseline-runs',
      '1',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as GenerateBenchRow);
    expect(rows.map((x) => [x.model, x.context])).toEqual([
      ['grassmann', 4],
      ['grassmann', 8],
      ['grassmann', 16],
      ['transformer-dpa', 4],
      ['transformer-dpa', 8],
      ['transformer-dpa', 16],
    ]);
    for (const x of rows) {
      expect(x).toMatchObject({
        preset: 'tiny',
        block: 16,
        vocab: 64,
        batch: 1,
        backend: 'wasm',
        threads: expect.any(Number) as number,
      });
      expect(x.steps).toBe(Math.min(3, x.context - 2));
      for (const k of [
        'decode_tokens_per_s',
        'decode_ms_per_token',
        'decode_cpu_ms_per_token',
        'full_forward_tokens_per_s',
        'full_forward_ms_per_token',
        'full_forward_cpu_ms_per_token',
        'speedup',
        'loadavg',
      ] as const) {
        expect(Number.isFinite(x[k]), k).toBe(true);
        expect(x[k] as number, k).toBeGreaterThanOrEqual(0);
      }
    }
    // State memory is a fact, not a timing: tiny has 2 layers, offsets [1] and [2], r 4 → (1 + 2)·4 floats at every
    // context; the Transformer's cache is 2 layers · (K, V) · t · d 16 floats.
    const g = rows.filter((x) => x.model === 'grassmann');
    expect(g.map((x) => x.state_bytes)).toEqual([48, 48, 48]);
    expect(g.every((x) => x.state_kind === 'ring-buffer')).toBe(true);
    const t = rows.filter((x) => x.model === 'transformer-dpa');
    expect(t.map((x) => x.state_bytes)).toEqual([4, 8, 16].map((c) => 2 * 2 * c * 16 * 4));
    expect(t.every((x) => x.state_kind === 'kv-cache')).toBe(true);
  });

  it('without --json: a markdown table; bad input gives a usage error', () => {
    const r = cli([
      'bench',
      '--generate',
      '--preset',
      'tiny',
      '--vocab',
      '64',
      '--models',
      'transformer-ea',
      '--contexts',
      '8',
      '--steps',
      '2',
      '--baseline-runs',
      '0',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '| model | context | decode tokens/s | ms/token | CPU ms/token | state bytes | full forward tokens/s | full forward CPU ms/token | speedup |',
    );
    expect(r.stdout).toMatch(/\| transformer-ea \| 8 \|/);
    const tooLong = cli(['bench', '--generate', '--preset', 'tiny', '--contexts', '64']);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(
      /--contexts 64 exceeds the positional table \(maxLen = 16\); raise it with --block 64/,
    );
    const badModel = cli(['bench', '--generate', '--preset', 'tiny', '--models', 'lstm']);
    expect(badModel.code).toBe(2);
    expect(badModel.stderr).toMatch(/unknown model kind 'lstm'/);
  });

  it('default contexts: powers of two from 16 up to maxLen, and maxLen', () => {
    expect(defaultContexts(128)).toEqual([16, 32, 64, 128]);
    expect(defaultContexts(100)).toEqual([16, 32, 64, 100]);
    expect(defaultContexts(10)).toEqual([10]);
  });
});
