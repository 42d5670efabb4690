// Backend selection for the CLI: initBackend, printed once at start.
import { initBackend, type BackendInfo, type BackendName } from '@grassflow/gpu-layers';

/** Initialise the tfjs backend (forced by --backend, else GRASSFLOW_BACKEND, else the first that loads) and print it to stderr. */
export async function startBackend(name: string | undefined): Promise<BackendInfo> {
  const info = await initBackend(name === undefined ? {} : { backend: name as BackendName });
  const detail = info.name === 'wasm' ? ` (${info.simd === true ? 'SIMD' : 'no SIMD'}, ${info.threads ?? 1} thread${info.threads === 1 ? '' : 's'})` : '';
  process.stderr.write(`backend: ${info.name}${detail}, tfjs-core ${info.tfjsCore}\n`);
  return info;
}
