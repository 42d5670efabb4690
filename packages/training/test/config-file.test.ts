// --config FILE: flags from a JSON object, checked as the flags themselves; the command line wins.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { argvWithConfigFile, parseFlags, UsageError, type FlagSpecs } from '@grassflow/training';

const SPECS = {
  steps: { type: 'int', min: 1, default: 10, help: 'steps' },
  lr: { type: 'float', min: 0, default: 1e-3, help: 'rate' },
  offsets: { type: 'string', help: 'a list' },
  quiet: { type: 'boolean', help: 'no bar' },
  'train-file': { type: 'string', help: 'text' },
  config: { type: 'string', help: 'a JSON file of flags' },
} as const satisfies FlagSpecs;

const dir = mkdtempSync(join(tmpdir(), 'grassflow-config-'));
function file(json: unknown, name = 'run.json'): string {
  const path = join(dir, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}
const parse = (argv: string[]) => parseFlags(argvWithConfigFile(argv, SPECS), SPECS);

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error('expected a UsageError');
}

describe('argvWithConfigFile', () => {
  it('gives each key as its flag: numbers, strings, lists, switches; the command line wins', () => {
    const cfg = file({ steps: 200, lr: 0.003, offsets: [1, 2, 4], quiet: true, 'train-file': 'a.txt' });
    const f = parse(['--config', cfg, '--steps', '5']);
    expect([f.steps, f.lr, f.offsets, f.quiet, f['train-file']]).toEqual([5, 0.003, '1,2,4', true, 'a.txt']);
    expect(parse([`--config=${cfg}`]).steps).toBe(200);
    expect(parse(['--config', file({ quiet: false })]).quiet).toBe(false);
    expect(argvWithConfigFile(['--steps', '3'], SPECS)).toEqual(['--steps', '3']); // no --config: as it is
  });

  it('refuses an unknown key with the nearest flag, and values the flag refuses', () => {
    expect(usage(() => parse(['--config', file({ stpes: 3 })])).message).toMatch(
      /unknown key "stpes" \(did you mean "steps"\?\); its keys are the flags without dashes/,
    );
    expect(usage(() => parse(['--config', file({ config: 'x.json' })])).message).toContain('unknown key "config"');
    expect(usage(() => parse(['--config', file({ steps: 0 })])).message).toContain('--steps must be >= 1');
    expect(usage(() => parse(['--config', file({ quiet: 'yes' })])).message).toContain('"quiet" must be true or false');
    expect(usage(() => parse(['--config', file({ steps: { n: 3 } })])).message).toContain(
      '"steps" must be a string, a number or a list',
    );
  });

  it('refuses a file that is not a JSON object, or no file', () => {
    expect(usage(() => parse(['--config', file('{ steps: 3', 'bad.json')])).message).toContain(
      'cannot read it as JSON',
    );
    expect(usage(() => parse(['--config', file([1, 2], 'list.json')])).message).toContain(
      'expected an object of flags',
    );
    expect(usage(() => parse(['--config', join(dir, 'missing.json')])).message).toContain('cannot read it as JSON');
    expect(usage(() => parse(['--config'])).message).toBe('--config needs a JSON file');
  });
});
