// The one atomic-write module: step order (write, fsync file, close, rename, fsync folder), crash safety, sync variant.
import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitFileAtomic,
  nodeFileSystem,
  temporarySibling,
  writeFileAtomic,
  writeFileAtomicSync,
  writeJsonAtomic,
  type FileSystemOps,
} from '@grassflow/checkpoints';
import { RecordingFs, SimulatedCrash } from './recording-fs.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grassflow-atomic-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('writes a temp sibling, fsyncs it, closes it, renames it over the target, then fsyncs the folder', async () => {
    const target = join(root, 'order', 'a.bin');
    const fs = new RecordingFs(root);
    await writeFileAtomic(target, [new Uint8Array([1, 2]), new Uint8Array([3])], fs);
    expect(fs.log).toEqual([
      'create <root>/order/a.bin.tmp',
      'write <root>/order/a.bin.tmp',
      'write <root>/order/a.bin.tmp',
      'sync <root>/order/a.bin.tmp',
      'close <root>/order/a.bin.tmp',
      'rename <root>/order/a.bin.tmp <root>/order/a.bin',
      'syncDirectory <root>/order',
    ]);
    expect([...(await readFile(target))]).toEqual([1, 2, 3]);
    expect(await readdir(dirname(target))).toEqual(['a.bin']);
  });

  it('accepts text, bytes, and async chunks, and creates missing folders', async () => {
    const a = join(root, 'kinds', 'deep', 'a.txt');
    await writeFileAtomic(a, 'héllo\n');
    expect(await readFile(a, 'utf8')).toBe('héllo\n');
    await writeFileAtomic(a, new TextEncoder().encode('bytes'));
    expect(await readFile(a, 'utf8')).toBe('bytes');
    async function* parts(): AsyncGenerator<Uint8Array> {
      yield await Promise.resolve(new TextEncoder().encode('as'));
      yield new TextEncoder().encode('ync');
    }
    await writeFileAtomic(a, parts());
    expect(await readFile(a, 'utf8')).toBe('async');
  });

  it('a crash at any step leaves the old content or the new, never a mix', async () => {
    const probe = new RecordingFs(root);
    await writeFileAtomic(
      join(root, 'probe.txt'),
      ['new ', 'content'].map((s) => new TextEncoder().encode(s)),
      probe,
    );
    const total = probe.log.length;
    const seen = new Set<string>();
    for (let k = 1; k <= total; k++) {
      const target = join(root, `crash-${k}`, 'file.txt');
      await writeFileAtomic(target, 'old content');
      const fs = new RecordingFs(root, k);
      const chunks = ['new ', 'content'].map((s) => new TextEncoder().encode(s));
      const error = await writeFileAtomic(target, chunks, fs).then(
        () => undefined,
        (e: unknown) => e,
      );
      await fs.reap();
      const text = await readFile(target, 'utf8');
      seen.add(text);
      expect(['old content', 'new content'], `crash at step ${k}`).toContain(text);
      // Until the rename has happened the crash is reported; only the final folder fsync can fail after it.
      if (text === 'old content') expect(error, `crash at step ${k}`).toBeInstanceOf(SimulatedCrash);
      // Every step up to and including the rename comes before the commit; only the folder fsync is after it.
      expect(text, `crash at step ${k}`).toBe(k < total ? 'old content' : 'new content');
    }
    expect(seen).toEqual(new Set(['old content', 'new content']));
  });

  it('a failed rename removes the temp file and leaves the target alone', async () => {
    const target = join(root, 'refused', 'x.txt');
    await writeFileAtomic(target, 'kept');
    const refusing: FileSystemOps = {
      ...nodeFileSystem,
      rename: () => Promise.reject(Object.assign(new Error('EXDEV: cross-device link'), { code: 'EXDEV' })),
    };
    await expect(writeFileAtomic(target, 'lost', refusing)).rejects.toThrow(/EXDEV/);
    expect(await readFile(target, 'utf8')).toBe('kept');
    expect(await readdir(dirname(target))).toEqual(['x.txt']);
  });
});

describe('writeJsonAtomic', () => {
  it('writes two-space indented JSON with a final newline', async () => {
    const path = join(root, 'json', 'v.json');
    await writeJsonAtomic(path, { a: 1, b: [true, null] });
    expect(await readFile(path, 'utf8')).toBe('{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}\n');
  });
});

describe('commitFileAtomic', () => {
  it('moves a temp file written elsewhere over the target (fsync, rename, folder fsync)', async () => {
    const target = join(root, 'commit', 'dl.bin');
    await writeFileAtomic(target, 'old');
    const tmp = temporarySibling(target);
    await writeFile(tmp, 'downloaded');
    const fs = new RecordingFs(root);
    await commitFileAtomic(tmp, target, fs);
    expect(fs.log).toEqual(['rename <root>/commit/dl.bin.tmp <root>/commit/dl.bin', 'syncDirectory <root>/commit']);
    expect(await readFile(target, 'utf8')).toBe('downloaded');
    expect(await readdir(dirname(target))).toEqual(['dl.bin']);
  });
});

describe('writeFileAtomicSync', () => {
  it('writes text and bytes, creating folders, leaving no temp file', async () => {
    const path = join(root, 'sync', 'deeper', 't.json');
    writeFileAtomicSync(path, '{"x":1}\n');
    expect(await readFile(path, 'utf8')).toBe('{"x":1}\n');
    writeFileAtomicSync(path, new Uint8Array([0x61, 0x62]));
    expect(await readFile(path, 'utf8')).toBe('ab');
    expect(await readdir(dirname(path))).toEqual(['t.json']);
  });

  it('a writer function fills the temp sibling; a throwing writer leaves the target and no temp file', async () => {
    const path = join(root, 'sync-fn', 'tok.json');
    let seenTmp = '';
    writeFileAtomicSync(path, (tmp) => {
      seenTmp = tmp;
      writeFileSync(tmp, 'from a library save()');
    });
    expect(dirname(seenTmp)).toBe(dirname(path));
    expect(seenTmp).toMatch(/tok\.json\.tmp-\d+-[0-9a-f]{12}$/);
    expect(await readFile(path, 'utf8')).toBe('from a library save()');
    expect(() =>
      writeFileAtomicSync(path, (tmp) => {
        writeFileSync(tmp, 'half');
        throw new Error('save failed');
      }),
    ).toThrow('save failed');
    expect(await readFile(path, 'utf8')).toBe('from a library save()');
    expect(await readdir(dirname(path))).toEqual(['tok.json']);
  });
});
