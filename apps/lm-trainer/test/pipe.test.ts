// Output into a pipe whose reader has gone (`grassflow-lm … | head -2`): the command ends quietly, exit 0.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = `--import tsx "${join(import.meta.dirname, '../src/cli.ts')}"`; // from source, as helpers.ts runs it

describe('a closed stdout pipe', () => {
  it('ends the command without an EPIPE stack (train --help | true)', () => {
    for (let i = 0; i < 3; i++) {
      // `true` exits without reading, so the command writes into a closed pipe
      const r = spawnSync(
        'bash',
        ['-c', `"${process.execPath}" ${CLI} train --help | true; echo "rc=\${PIPESTATUS[0]}"`],
        {
          encoding: 'utf8',
        },
      );
      expect(r.stdout.trim()).toBe('rc=0');
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
    }
  });
});
