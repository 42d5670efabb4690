// Shared test setup: temp folders and backend selection.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '@grassflow/gpu-layers';

/** A fresh temp folder; remove it with {@link removeTemp}. */
export function makeTemp(tag: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `distilbert-${tag}-`));
}

export function removeTemp(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

export async function useBackend(name: 'cpu' | 'wasm'): Promise<void> {
  await initBackend({ backend: name });
}

/** Row-major values of a [B, T] list of lists. */
export function flat(rows: number[][]): Int32Array {
  return Int32Array.from(rows.flat());
}
