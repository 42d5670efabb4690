// The one guard of every output folder: never `/`, a system folder, a file, a kernel file system or a user's files.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkWritableFolder, OUTPUT_MARKER_FILE, prepareOutputFolder, UsageError } from '../src/index';

const base = (): string => mkdtempSync(join(tmpdir(), 'grassflow-out-folder-'));

describe('prepareOutputFolder', () => {
  it('refuses / and system folders at once, creating nothing', () => {
    for (const dir of ['/', '/etc', '/usr/lib', '/tmp', '/home', '/dev/shm/x']) {
      expect(() => prepareOutputFolder(dir, { command: 'inspect' }), dir).toThrow(
        /is (a folder of other folders|inside the system folder \/\w+): give a folder of its own/,
      );
    }
    expect(readdirSync('/').includes('grassflow-out')).toBe(false);
  });

  it('refuses a path under /proc at once (Node 20 recursive mkdir there never returns)', () => {
    const t0 = Date.now();
    expect(() => prepareOutputFolder('/proc/x/y', { command: 'inspect' })).toThrow(/inside the system folder \/proc/);
    expect(() => checkWritableFolder('/proc/self/x', 'runs')).toThrow(/--runs \/proc\/self\/x is inside the system/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a file, or a path through a file: one line naming it and saying to give a folder (a UsageError)', () => {
    const file = join(base(), 'a-file');
    writeFileSync(file, 'x');
    let err: unknown;
    try {
      prepareOutputFolder(file, { command: 'inspect' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(`--out ${file} is a file: give a folder (a new or empty one)`);
    expect(() => checkWritableFolder(join(file, 'sub'), 'out')).toThrow(`${file} is a file, not a folder`);
  });

  it("refuses a folder of the user's files, takes its own earlier output again", () => {
    const mine = join(base(), 'mine');
    mkdirSync(mine);
    writeFileSync(join(mine, 'report.md'), 'my report');
    writeFileSync(join(mine, 'inspect.json'), '{"mine":1}');
    expect(() => prepareOutputFolder(mine, { command: 'inspect' })).toThrow(
      /holds files inspect did not write \(inspect.json, report.md\): give a new or empty folder/,
    );
    expect(readdirSync(mine).sort()).toEqual(['inspect.json', 'report.md']);
    const out = join(base(), 'deep', 'out');
    expect(prepareOutputFolder(out, { command: 'inspect' })).toBe(out);
    expect(JSON.parse(readFileSync(join(out, OUTPUT_MARKER_FILE), 'utf8'))).toMatchObject({ command: 'inspect' });
    writeFileSync(join(out, 'report.md'), 'an earlier report');
    expect(prepareOutputFolder(out, { command: 'inspect' })).toBe(out); // its own: written again
    expect(() => prepareOutputFolder(out, { command: 'ladder' })).toThrow(/holds files ladder did not write/);
    expect(existsSync(join(out, 'report.md'))).toBe(true);
  });
});
