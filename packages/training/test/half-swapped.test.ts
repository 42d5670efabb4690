// A save that crashed between its two renames leaves only <dir>.old-*: every command's --checkpoint reads it.
import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModel, initBackend, loadCheckpoint, preset, saveCheckpoint } from '@grassflow/gpu-layers';
import { describe, expect, it } from 'vitest';
import { resolveCheckpointDir, UsageError } from '@grassflow/training';

describe('resolveCheckpointDir on a half-finished swap', () => {
  it('passes a missing folder with a <dir>.old-* sibling to the loader, which reads the complete old save', async () => {
    await initBackend({ backend: 'cpu' });
    const root = mkdtempSync(join(tmpdir(), 'half-swap-'));
    const latest = join(root, 'latest');
    const model = createModel(preset('tiny'), { seed: 3 });
    await saveCheckpoint(latest, model);
    renameSync(latest, `${latest}.old-1234-0123456789ab`); // the state between "rename dir → old" and "rename new → dir"
    expect(resolveCheckpointDir(latest, 'toy-run')).toBe(latest);
    const loaded = await loadCheckpoint(latest);
    expect(loaded.model.config).toEqual(model.config);
    loaded.model.dispose();
    model.dispose();
    expect(() => resolveCheckpointDir(join(root, 'nothing'), 'toy-run')).toThrow(UsageError);
  });
});
