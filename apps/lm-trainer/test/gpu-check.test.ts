// scripts/gpu-check.sh, the script a machine with an NVIDIA GPU runs, in its quick mode on whatever WebGPU adapter is
// here (lavapipe in CI, so with --allow-software): it writes the device, bench and training results and a summary
// that labels a software adapter's numbers; and it refuses, with what to install, a machine without NVIDIA's Vulkan
// ICD or a software adapter presented as the GPU. Skipped only when the webgpu packages or any adapter are missing and
// GRASSFLOW_REQUIRE_WEBGPU is not set (CI installs lavapipe and sets it). The CLI runs from source (tsx; or the
// command in GRASSFLOW_GPU_CHECK_CLI), gpu-layers from its dist (built before tests).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { webgpuSuiteGate } from '@grassflow/gpu-layers';
import type { TrainBenchResult } from '../src/bench/train.js';
import { APP_DIR, DATA_DIR, env, metrics, tmp } from './helpers.js';

const SCRIPT = join(APP_DIR, '../../scripts/gpu-check.sh');
const LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';

const { info, missing, skip } = await webgpuSuiteGate('webgpu gpu-check tests');
const fallback = info?.adapter?.fallback === true;

/** Run the script with `args`; `extra` over the test environment (GRASSFLOW_BACKEND is dropped, as a user has none). */
function gpuCheck(args: readonly string[], extra: NodeJS.ProcessEnv = {}) {
  const e: NodeJS.ProcessEnv = {
    ...env(),
    // the source through tsx (the app's dist may be older than its source during `pnpm test`), unless one is given
    GRASSFLOW_GPU_CHECK_CLI:
      process.env['GRASSFLOW_GPU_CHECK_CLI'] ?? `${process.execPath} --import tsx ${join(APP_DIR, 'src/cli.ts')}`,
    ...extra,
  };
  delete e['GRASSFLOW_BACKEND'];
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete e[k];
  const r = spawnSync('bash', [SCRIPT, ...args], { cwd: APP_DIR, env: e, encoding: 'utf8', timeout: 200_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(skip)('scripts/gpu-check.sh', () => {
  it('--quick: device, bench of the three kinds, a training run and summary.md in one folder', () => {
    expect(missing).toBeUndefined();
    const out = join(tmp(), 'gpu-check');
    const args = ['--quick', '--out', out, ...(fallback === true ? ['--allow-software'] : [])];
    const r = gpuCheck(DATA_DIR === undefined ? [...args, '--skip-train'] : [...args, '--data-dir', DATA_DIR]);
    expect(r.code, r.stderr).toBe(0);
    const device = JSON.parse(readFileSync(join(out, 'device.json'), 'utf8')) as {
      adapter: { vendor: string; fallback: boolean };
      software_rendering: boolean;
      matmul_256: { rel_err_vs_cpu: number };
    };
    expect(device.software_rendering).toBe(fallback);
    expect(device.matmul_256.rel_err_vs_cpu).toBeLessThan(1e-4);
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    for (const model of ['grassmann', 'transformer-dpa', 'transformer-ea']) {
      const b = JSON.parse(readFileSync(join(out, `bench-${model}.json`), 'utf8')) as TrainBenchResult;
      expect(b).toMatchObject({ model, preset: 'tiny', backend: 'webgpu', software_rendering: fallback });
      expect(b.train_tokens_per_s).toBeGreaterThan(0);
      expect(summary).toContain(`| ${model} | tiny |`);
    }
    if (fallback === true) {
      expect(summary).toMatch(/^> \*\*Software rendering\.\*\* .*/m);
      expect(summary.match(/\| yes: CPU speed \|$/gm)?.length).toBe(3);
      expect(r.stderr).toMatch(/s\/step \(software rendering\)$/m);
    } else expect(summary).not.toContain('Software rendering');
    if (DATA_DIR !== undefined) {
      const train = metrics(join(out, 'train')).filter((m) => m['type'] === 'train');
      expect(train.map((m) => m['step'])).toEqual([1, 2, 3]);
      expect(summary).toMatch(/^- validation at step 3: PPL [\d.]+ /m);
      expect(existsSync(join(out, 'train', 'report.md'))).toBe(true);
      expect(summary).toContain('![training loss](train/loss.png)');
    } else expect(summary).toContain('Skipped (--skip-train).');
  });

  const hasNvidiaIcd = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/nvidia/share/vulkan/icd.d'].some(
    (d) => existsSync(join(d, 'nvidia_icd.json')),
  );
  it.skipIf(hasNvidiaIcd)('refuses a machine without NVIDIA’s Vulkan ICD, naming what provides it', () => {
    expect(missing).toBeUndefined();
    const r = gpuCheck(['--quick', '--skip-train', '--out', join(tmp(), 'no-icd')], {
      VK_ICD_FILENAMES: undefined,
      VK_DRIVER_FILES: undefined,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no NVIDIA Vulkan ICD JSON \(nvidia_icd\.json\) found .*nvidia-vulkan-icd/);
  });

  it.runIf(fallback === true && existsSync(LAVAPIPE_ICD))(
    'refuses to present a software adapter as the GPU without --allow-software',
    () => {
      // An ICD file named like NVIDIA's that loads lavapipe: the ICD check passes, the adapter is a software one.
      const dir = tmp();
      const icd = join(dir, 'nvidia_icd.json');
      writeFileSync(icd, readFileSync(LAVAPIPE_ICD));
      const r = gpuCheck(['--quick', '--skip-train', '--out', join(dir, 'software')], { VK_ICD_FILENAMES: icd });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the adapter is a software fallback \(.*\), not the GPU: .*--allow-software/);
      expect(existsSync(join(dir, 'software', 'device.json'))).toBe(true);
      expect(existsSync(join(dir, 'software', 'bench-grassmann.json'))).toBe(false);
    },
  );
});
