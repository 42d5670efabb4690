import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrBuildTokenIds, TOKEN_CACHE_HEADER_BYTES, tokenCachePath, type TokenCacheKey } from '@grassflow/datasets';

const key: TokenCacheKey = { name: 'toy.train', sourceSha256: 'a'.repeat(64), encoderKey: 'tok-A' };
const ids = Int32Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 30522) - (i % 3 === 0 ? 5 : 0));

let dir: string;
let builds: number;
const build = (): Int32Array => {
  builds++;
  return ids.slice();
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gf-cache-'));
  builds = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('token-id cache', () => {
  it('builds on a miss, then hits with identical ids (Int32 LE after a 128-byte header)', async () => {
    const first = await loadOrBuildTokenIds(dir, key, build);
    expect(first.status).toBe('miss');
    const second = await loadOrBuildTokenIds(dir, key, build);
    expect(second.status).toBe('hit');
    expect(builds).toBe(1);
    expect([...second.ids]).toEqual([...ids]);
    const bytes = await readFile(first.path);
    expect(bytes.length).toBe(TOKEN_CACHE_HEADER_BYTES + 4 * ids.length);
    expect(bytes.toString('latin1', 0, 8)).toBe('GFTOKIDS');
    expect(bytes.readInt32LE(TOKEN_CACHE_HEADER_BYTES + 4 * 3)).toBe(ids[3]);
  });

  it('rebuilds when the source changed (stale)', async () => {
    await loadOrBuildTokenIds(dir, key, build);
    const r = await loadOrBuildTokenIds(dir, { ...key, sourceSha256: 'b'.repeat(64) }, build);
    expect(r.status).toBe('stale');
    expect(r.reason).toContain('source');
    expect(builds).toBe(2);
    expect((await loadOrBuildTokenIds(dir, { ...key, sourceSha256: 'b'.repeat(64) }, build)).status).toBe('hit');
  });

  it('keeps one file per tokenizer, and a file written for another tokenizer is stale', async () => {
    const a = await loadOrBuildTokenIds(dir, key, build);
    const keyB = { ...key, encoderKey: 'tok-B' };
    expect(tokenCachePath(dir, keyB)).not.toBe(a.path);
    expect((await loadOrBuildTokenIds(dir, keyB, build)).status).toBe('miss');
    await writeFile(tokenCachePath(dir, keyB), await readFile(a.path)); // A's ids under B's name
    const r = await loadOrBuildTokenIds(dir, keyB, build);
    expect(r.status).toBe('stale');
    expect(r.reason).toContain('tokenizer');
  });

  it.each([
    ['truncated', (b: Buffer) => b.subarray(0, b.length - 6)],
    ['bad magic', (b: Buffer) => Buffer.concat([Buffer.from('XXXXXXXX'), b.subarray(8)])],
    [
      'payload bit flip',
      (b: Buffer) => {
        const c = Buffer.from(b);
        c[TOKEN_CACHE_HEADER_BYTES + 17] = (c[TOKEN_CACHE_HEADER_BYTES + 17] as number) ^ 1;
        return c;
      },
    ],
    ['shorter than the header', (b: Buffer) => b.subarray(0, 40)],
  ])('detects a corrupt file (%s) and rebuilds it', async (_name, damage) => {
    const first = await loadOrBuildTokenIds(dir, key, build);
    await writeFile(first.path, damage(await readFile(first.path)));
    const r = await loadOrBuildTokenIds(dir, key, build);
    expect(r.status).toBe('corrupt');
    expect([...r.ids]).toEqual([...ids]);
    expect((await loadOrBuildTokenIds(dir, key, build)).status).toBe('hit');
    expect(builds).toBe(2);
  });

  it('reports (without failing) a cache folder it cannot write', async () => {
    const blocker = join(dir, 'file');
    await writeFile(blocker, 'x');
    const r = await loadOrBuildTokenIds(join(blocker, 'sub'), key, build);
    expect(r.status).toBe('miss');
    expect(r.writeError).toContain('cannot write');
    expect([...r.ids]).toEqual([...ids]);
  });
});
