// A checkpoint or an export whose config.json lost its `files` record (and whose weights then changed) is refused by
// generate, loaded only with --trust, and never exported: an export's fresh SHA-256s would vouch for unchecked bytes.
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, DATA_DIR, TINY, tmp } from './helpers.js';

/** Remove config.json's `files` record and flip a bit of the last weight, as the adversary did. */
function unrecord(dir: string): void {
  const path = join(dir, 'config.json');
  const cfg = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  delete cfg['files'];
  writeFileSync(path, JSON.stringify(cfg));
  const weights = readFileSync(join(dir, 'model.safetensors'));
  weights[weights.length - 2] = (weights[weights.length - 2] as number) ^ 0x01;
  writeFileSync(join(dir, 'model.safetensors'), weights);
}

describe.skipIf(DATA_DIR === undefined)('a checkpoint without its files record (needs GRASSFLOW_DATA_DIR)', () => {
  it('export refuses it; generate refuses it and an export without the record, and loads both with --trust', () => {
    const root = tmp();
    const run = join(root, 'run');
    const trained = cli(['train', '--model', 'grassmann', ...TINY, '--steps', '2', '--eval-every', '1', '--out', run]);
    expect(trained.code, trained.stderr).toBe(0);
    const good = join(root, 'export-good');
    const exported = cli(['export', run, '--out', good]);
    expect(exported.code, exported.stderr).toBe(0);

    for (const c of ['best', 'latest']) unrecord(join(run, 'checkpoints', c));
    const out = join(root, 'export-bad');
    const refused = cli(['export', run, '--out', out]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/config\.json records no size and SHA-256 of its weights .*export a checkpoint/);
    expect(existsSync(join(out, 'config.json'))).toBe(false); // no export with fresh records of those bytes

    const prompt = ['--prompt', 'the history of', '--max-tokens', '3', '--seed', '1'];
    const gen = cli(['generate', '--checkpoint', run, ...prompt]);
    expect(gen.code, gen.stderr).toBe(1);
    expect(gen.stderr).toMatch(/CheckpointError: \S+: config\.json records no size and SHA-256 for model\.safetensors/);
    expect(gen.stderr).toContain('(--trust');
    const trusted = cli(['generate', '--checkpoint', run, ...prompt, '--trust']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain('so its bytes are not verified');

    // an export folder without the record: generate refuses it too
    const copy = join(root, 'export-copy');
    cpSync(good, copy, { recursive: true });
    unrecord(copy);
    const fromExport = cli(['generate', '--checkpoint', copy, ...prompt]);
    expect(fromExport.code, fromExport.stderr).toBe(1);
    expect(fromExport.stderr).toContain('records no size and SHA-256 for model.safetensors');
    const exportTrusted = cli(['generate', '--checkpoint', copy, ...prompt, '--trust']);
    expect(exportTrusted.code, exportTrusted.stderr).toBe(0);
  }, 400_000);
});
