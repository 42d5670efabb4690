// gpu.js is an optional peer dependency: the package loads without it, and asking for the 'gpujs' backend without it
// says what to do.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GpuJsUnavailableError, pluckerBatch } from '@grassflow/grassmann-math';

const packageDir = join(import.meta.dirname, '..');

/**
 * Runs `body` (an ES module's text, with the package's src/index.ts as `m`) in a Node where gpu.js cannot be found,
 * as in a project that did not install it: a resolve hook answers Node's own ERR_MODULE_NOT_FOUND for it.
 */
function withoutGpuJs(body: string): string {
  const hook = `export async function resolve(specifier, context, next) {
    if (specifier === 'gpu.js') {
      const err = new Error("Cannot find package 'gpu.js' imported from " + context.parentURL);
      err.code = 'ERR_MODULE_NOT_FOUND';
      throw err;
    }
    return next(specifier, context);
  }`;
  const register = `import { register } from 'node:module';
    register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const main = `const m = await import(${JSON.stringify(join(packageDir, 'src', 'index.ts'))}); ${body}`;
  return execFileSync(
    process.execPath,
    ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module'],
    { cwd: packageDir, input: main, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] },
  );
}

describe("gpu.js, an optional peer dependency of pluckerBatch's 'gpujs' backend", () => {
  it("backend 'gpujs' before loadGpuJs() throws a GpuJsUnavailableError that says to call it (N = 0 too)", () => {
    const a = new Float32Array(8);
    for (const N of [2, 0]) {
      let caught: unknown;
      try {
        pluckerBatch(a.subarray(0, N * 4), a.subarray(0, N * 4), N, 4, { backend: 'gpujs' });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(GpuJsUnavailableError);
      expect((caught as GpuJsUnavailableError).reason).toBe('not-loaded');
      expect((caught as Error).message).toContain('await loadGpuJs()');
    }
  });

  it('without gpu.js installed the package loads, the ts backend runs, and loadGpuJs() names the package', () => {
    const out = withoutGpuJs(`
      const p = m.pluckerBatch(new Float32Array([1, 0, 0, 1]), new Float32Array([0, 1, 1, 0]), 2, 2);
      try { await m.loadGpuJs(); console.log(JSON.stringify({ loaded: true })); }
      catch (err) { console.log(JSON.stringify({ p: Array.from(p), name: err.name, reason: err.reason, message: err.message })); }
    `);
    const result = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(result).toMatchObject({ p: [1, -1], name: 'GpuJsUnavailableError', reason: 'not-installed' });
    expect(result['message']).toContain('npm install gpu.js@2.24.1');
  });
});
