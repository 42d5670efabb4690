// How bench results name the device they ran on: numbers from a software (fallback) WebGPU adapter, such as Mesa's
// lavapipe, are labelled as software rendering in the printed lines and the JSON, so that nobody reads them as GPU
// numbers.
import { describeAdapter, type BackendInfo } from '@grassflow/gpu-layers';

/** The fields every bench JSON line carries about its device. */
export interface DeviceLabel {
  /** webgpu: the adapter, one line (a software fallback says so); null on the other backends. */
  adapter: string | null;
  /** True on a fallback (software) WebGPU adapter: the numbers are the CPU's speed, not a GPU's. */
  software_rendering: boolean;
}

/** The note printed beside numbers measured on a software adapter. */
export const SOFTWARE_RENDERING_NOTE =
  'software rendering: a fallback WebGPU adapter (e.g. Mesa lavapipe) runs on the CPU; these are not GPU numbers';

/** The device fields of a selected backend. */
export function deviceLabel(info: Pick<BackendInfo, 'adapter'>): DeviceLabel {
  return {
    adapter: info.adapter === undefined ? null : describeAdapter(info.adapter),
    software_rendering: info.adapter?.fallback === true,
  };
}
