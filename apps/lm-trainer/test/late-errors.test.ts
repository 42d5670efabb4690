// A sitting's inputs that are wrong, refused before anything is trained and named in one line: a study file that is a
// device or too large, a ledger that is a folder, a --runs that is a file; a ledger on a disk that fills up during the
// sitting (a real ENOSPC on a tiny tmpfs, in a private mount namespace); a training process killed as the OOM killer
// kills (SIGKILL from outside), said in one line.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_DIR, cli, cliAsync, DATA_DIR, env, metrics, tmp, until, watch } from './helpers.js';

const skip = DATA_DIR === undefined ? 'set GRASSFLOW_DATA_DIR to the WikiText-2 data folder' : undefined;
if (skip !== undefined) console.log(`late-errors.test.ts skipped: ${skip}`);

// a private mount namespace with a tmpfs of our own: root (CI) or user namespaces; else the ENOSPC test is skipped
const UNSHARE =
  spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=64k none ${tmp()}`], { encoding: 'utf8' }).status ===
  0;

describe.skipIf(skip !== undefined)('late or unclear errors of a sitting, refused early in one line', () => {
  const root = tmp();
  const base = { preset: 'tiny', batch: 8, 'eval-tokens': 256, warmup: 1, lr: 3e-3 };
  const studyOf = (name: string, steps: number): string => {
    const file = join(root, `${name}.json`);
    writeFileSync(file, JSON.stringify({ name, base, runs: [{ model: 'grassmann', seed: 1, steps }], heldOut: false }));
    return file;
  };

  it('a study file that is a device or too large, a ledger that is a folder, a --runs that is a file', () => {
    const dev = cli(['study', 'status', '/dev/full']);
    expect(dev.code, dev.stderr).toBe(2);
    expect(dev.stderr).toContain('study file /dev/full is not a regular file (a device)');
    const big = join(root, 'big.json');
    writeFileSync(big, `{ "name": "big", "runs": [] ${' '.repeat(2 ** 21)}}`);
    const large = cli(['study', 'status', big]);
    expect(large.code, large.stderr).toBe(2);
    expect(large.stderr).toMatch(/big\.json is 2\.0 MiB; a study file is JSON of at most 1 MiB/);

    const study = studyOf('folders', 2);
    const out = join(root, 'ledger-is-a-folder');
    mkdirSync(join(out, 'ledger.jsonl'), { recursive: true });
    const ledger = cli(['study', 'status', study, '--out', out]);
    expect(ledger.code, ledger.stderr).toBe(1);
    expect(ledger.stderr.trim()).toBe(
      `grassflow-lm study: LedgerError: cannot read the ledger ${join(out, 'ledger.jsonl')}: a folder is in the way ` +
        `(${join(out, 'ledger.jsonl')} is a folder, not a file): move it away or choose another path [EISDIR]`,
    );

    const file = join(root, 'a-file');
    writeFileSync(file, '');
    const runs = cli(['study', 'run', study, '--out', join(root, 'runs-a-file'), '--runs', file, '--quiet']);
    expect(runs.code, runs.stderr).toBe(2);
    expect(runs.stderr).toContain(`--runs ${file} is a file: give a folder`);
    expect(runs.stderr).not.toContain('backend:'); // refused before the backend or any data is loaded
  }, 240_000);

  it.skipIf(!UNSHARE)(
    'a read-only --out refused at once; a full disk under the ledger named, then recorded',
    () => {
      const study = studyOf('full', 2);
      const disk = join(root, 'disk');
      mkdirSync(disk);
      const runs = join(root, 'full-runs');
      const node = `"${process.execPath}" --import tsx src/cli.ts study run "${study}" --runs "${runs}" --quiet`;
      // in a mount namespace of its own: a read-only tmpfs, then a 64 KiB one filled up once the sitting holds its lock
      // (the lock fits; the ledger record, written after training, does not), then the same sitting with space again
      const script = [
        `mount -t tmpfs -o size=64k,ro none "${disk}"`,
        `${node} --out "${disk}/ro" 2>&1; echo "== read-only: exit $?"`,
        `umount "${disk}"; mount -t tmpfs -o size=64k none "${disk}"`,
        `${node} --out "${disk}" 2>&1 & pid=$!`,
        `while [ ! -e "${disk}/.grassflow-run.lock" ] && kill -0 $pid 2>/dev/null; do sleep 0.2; done`,
        `dd if=/dev/zero of="${disk}/fill" bs=4k 2>/dev/null`,
        'wait $pid; echo "== full: exit $?"',
        `rm "${disk}/fill"`,
        `${node} --out "${disk}" 2>&1; echo "== again: exit $?"`,
        `echo "== records: $(wc -l < "${disk}/ledger.jsonl")"`,
      ].join('\n');
      const r = spawnSync('unshare', ['-rm', 'sh', '-c', script], {
        cwd: APP_DIR,
        env: env(),
        encoding: 'utf8',
        timeout: 400_000, // three sittings of a tiny run, each starting node and tsx
      });
      const said = `${r.stdout}${r.stderr}`;
      const [ro = '', full = '', again = ''] = said.split(/^== [\w-]+: exit \d+$/m);
      expect(said, said).toMatch(
        /== read-only: exit 2\n[\s\S]*== full: exit 1\n[\s\S]*== again: exit 0\n== records: 1/,
      );
      expect(ro).toMatch(/--out \S+\/ro: it cannot be written here .*\[EROFS\]/);
      expect(ro).not.toContain('backend:'); // before anything is loaded or trained
      expect(full).toContain(
        `LedgerError: cannot write the ledger ${disk}/ledger.jsonl: the disk is full: free space or choose another ` +
          'disk [ENOSPC]; the finished run stays in its run folder',
      );
      // the next sitting records the finished run from its folder (resumed at its last step: nothing trained again)
      expect(again).toMatch(/resuming from its checkpoint/);
      expect(again).toMatch(/resuming \S+ at step 2: /);
    },
    240_000,
  );

  it('a training process killed by SIGKILL from outside (the OOM killer): one line that says so', async () => {
    const out = join(root, 'killed');
    const p = watch(cliAsync(['study', 'run', studyOf('killed', 400), '--out', out, '--runs', join(out, 'runs')]));
    const trained = (): boolean => {
      const runs = join(out, 'runs');
      if (!existsSync(runs)) return false;
      const key = readdirSync(runs)[0];
      return key !== undefined && existsSync(join(runs, key, 'metrics.jsonl')) && metrics(join(runs, key)).length > 0;
    };
    await until('the run to train a step', trained, 150_000, p.out);
    // the supervised child (the CLI re-runs itself in a child that trains), as the kernel's OOM killer would
    const children = readFileSync(`/proc/${p.child.pid}/task/${p.child.pid}/children`, 'utf8').trim().split(' ');
    expect(children).toHaveLength(1);
    process.kill(Number(children[0]), 'SIGKILL');
    expect(await p.exited).toBe(137);
    expect(p.out().trim().split('\n').pop()).toMatch(
      /^study run \S+killed\.json .*: killed by SIGKILL, not by a signal sent to it here: most likely the kernel's OOM killer/,
    );
  }, 420_000);
});
