// Whether the webgpu backend can start in this process, and the skip-or-fail policy every webgpu test suite shares.
import { BackendUnavailableError, initBackend, type BackendInfo, type BackendName } from './backend.js';

/** Either the webgpu backend's info, or why it cannot start here. */
export type WebgpuAvailability = { info: BackendInfo; missing?: undefined } | { info?: undefined; missing: string };

/**
 * Starts the webgpu backend once to see whether it can run here, then makes `restore` the active backend again.
 * Only "not installed" (the webgpu packages) and "found no adapter" count as missing; any other failure (a broken
 * driver, an install that loads but fails) is thrown, so it is seen rather than skipped.
 */
export async function webgpuAvailability(restore: BackendName = 'cpu'): Promise<WebgpuAvailability> {
  try {
    return { info: await initBackend({ backend: 'webgpu' }) };
  } catch (err) {
    if (err instanceof BackendUnavailableError && /not installed|found no adapter/.test(err.message)) {
      return { missing: err.message };
    }
    throw err;
  } finally {
    await initBackend({ backend: restore });
  }
}

/** webgpuAvailability for a test suite, with the policy of GRASSFLOW_REQUIRE_WEBGPU. */
export interface WebgpuSuiteGate {
  /** The adapter's backend info where webgpu runs. */
  info?: BackendInfo;
  /** Why webgpu cannot run here, where it cannot. */
  missing?: string;
  /** GRASSFLOW_REQUIRE_WEBGPU is set (CI sets it after installing lavapipe): a missing webgpu fails instead. */
  required: boolean;
  /** Skip the suite: webgpu is missing and not required. */
  skip: boolean;
}

/**
 * The gate of a webgpu test suite: skip it (with the reason printed, naming `suite`) when webgpu is missing here,
 * unless GRASSFLOW_REQUIRE_WEBGPU is set; then the suite runs and fails, so CI cannot pass by skipping it.
 */
export async function webgpuSuiteGate(suite: string): Promise<WebgpuSuiteGate> {
  const required = (process.env['GRASSFLOW_REQUIRE_WEBGPU'] ?? '') !== '';
  const { info, missing } = await webgpuAvailability();
  const skip = missing !== undefined && !required;
  if (skip) console.warn(`${suite} skipped: ${missing} (set GRASSFLOW_REQUIRE_WEBGPU=1 to fail instead)`);
  return { info, missing, required, skip };
}
