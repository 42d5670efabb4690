// The 'webgpu' backend: tfjs-backend-webgpu 4.22, under Node on Dawn's binding (npm `webgpu`, pinned to 0.6.2).
// Both are optional peer dependencies (users install them for this backend); the errors here say what to install.

/** The WebGPU adapter the backend runs on, as it describes itself. */
export interface WebgpuAdapterInfo {
  vendor: string;
  architecture: string;
  description: string;
  /** A software (fallback) adapter, e.g. Mesa's lavapipe: correct but slow. */
  fallback: boolean;
}

/**
 * One line naming a WebGPU adapter for logs and benchmark tables; a fallback adapter is labelled as software
 * rendering, since its speed is the CPU's (lavapipe), not a GPU's.
 */
export function describeAdapter(a: WebgpuAdapterInfo): string {
  const name = `${a.vendor} ${a.architecture}`.trim() || 'unnamed adapter';
  const what = a.description === '' ? name : `${name} (${a.description})`;
  return a.fallback ? `${what}, a software fallback adapter: CPU rendering, not GPU speed` : what;
}

/** What is used here of GPUAdapter (the package's types stay free of @webgpu/types, which comes with webgpu). */
interface AdapterLike {
  info?: { vendor?: string; architecture?: string; description?: string; device?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
}
interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<AdapterLike | null>;
}
interface DawnBinding {
  create(flags: string[]): GpuLike;
  globals: Record<string, unknown>;
}

/** The npm packages and the Debian 12 line that give a working adapter without a GPU (see the README). */
export const WEBGPU_INSTALL = 'npm install webgpu@0.6.2 @tensorflow/tfjs-backend-webgpu@4.22.0';
export const LAVAPIPE_INSTALL =
  'apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1 ' +
  '(Mesa >= 25; Debian 12’s own Mesa 22 is refused)';

const DAWN = 'webgpu';
const NODE_MODULE = 'node:module';
const NODE_CHILD_PROCESS = 'node:child_process';
const NODE_URL = 'node:url';
const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * The two lines Dawn prints on stderr (from C++, so no JavaScript hook sees them) whenever it enumerates an adapter
 * whose Vulkan driver reports more dynamic buffers than Dawn allows (lavapipe reports 1,000,000; Dawn clamps to 16):
 * harmless, and printed even when that adapter is then not used.
 */
export const DAWN_LIMIT_WARNING =
  /^Warning: maxDynamic(?:Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.$/;

/** The adapter fields both the in-process request and the probe process read (GPUAdapterInfo's are getters). */
function adapterInfo(adapter: AdapterLike): WebgpuAdapterInfo {
  const info = adapter.info ?? {};
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    description: info.description !== undefined && info.description !== '' ? info.description : (info.device ?? ''),
    fallback: info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false,
  };
}

/** The probe process: prints the adapter's fields as one JSON line, then exits (Dawn would keep it alive). */
const PROBE_SCRIPT = `
let out;
try {
  const { create } = await import(process.argv[1]);
  const a = await create([]).requestAdapter({ powerPreference: 'high-performance' });
  const i = a === null ? {} : (a.info ?? {});
  const pick = (k) => (typeof i[k] === 'string' ? i[k] : undefined);
  out = a === null ? { adapter: null } : { adapter: {
    info: { vendor: pick('vendor'), architecture: pick('architecture'), description: pick('description'),
      device: pick('device'), isFallbackAdapter: typeof i.isFallbackAdapter === 'boolean' ? i.isFallbackAdapter : undefined },
    isFallbackAdapter: typeof a.isFallbackAdapter === 'boolean' ? a.isFallbackAdapter : undefined } };
} catch (err) {
  out = { error: String(err && err.message ? err.message : err) };
}
process.stdout.write(JSON.stringify(out) + '\\n');
process.exit(0);
`;

/**
 * The adapter Dawn would give, asked in a separate Node process (null: none), so that this process neither loads
 * Dawn nor shows {@link DAWN_LIMIT_WARNING} when the adapter is not used (automatic selection refuses a software
 * one). Every other line the probe prints on stderr is passed on. Node only; throws (Error) with what is missing.
 */
export async function probeWebgpuAdapter(timeoutMs = 60_000): Promise<WebgpuAdapterInfo | null> {
  if (!isNode) throw new Error('probeWebgpuAdapter runs under Node only');
  const { createRequire } = (await import(/* @vite-ignore */ NODE_MODULE)) as typeof import('node:module');
  const { spawn } = (await import(/* @vite-ignore */ NODE_CHILD_PROCESS)) as typeof import('node:child_process');
  const { pathToFileURL } = (await import(/* @vite-ignore */ NODE_URL)) as typeof import('node:url');
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(DAWN);
  } catch {
    throw new Error(
      `under Node it needs Dawn's binding, npm package webgpu, which is not installed: run \`${WEBGPU_INSTALL}\``,
    );
  }
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE_SCRIPT, pathToFileURL(entry).href], {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const others = stderr.split('\n').filter((l) => l.trim() !== '' && !DAWN_LIMIT_WARNING.test(l.trim()));
  if (others.length > 0) process.stderr.write(`${others.join('\n')}\n`);
  const last = stdout.trim().split('\n').pop() ?? '';
  let out: { adapter?: AdapterLike | null; error?: string };
  try {
    out = JSON.parse(last) as typeof out;
  } catch {
    throw new Error(
      `the WebGPU adapter probe (a Node process loading Dawn) ended with code ${code} and no answer` +
        (child.signalCode !== null ? ` (signal ${child.signalCode}; it is stopped after ${timeoutMs / 1000} s)` : ''),
    );
  }
  if (out.error !== undefined) {
    throw new Error(
      `the npm package webgpu is installed but its dawn.node failed to load (webgpu@0.6.2 needs GLIBCXX_3.4.30; ` +
        `0.5.0–0.6.1 need 3.4.32, which Debian 12 lacks): ${out.error}`,
    );
  }
  return out.adapter === null || out.adapter === undefined ? null : adapterInfo(out.adapter);
}

/** navigator.gpu as set by {@link provideNavigatorGpu} (Node only), so that it can be dropped again. */
let ours: GpuLike | undefined;

function navigatorGpu(): GpuLike | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator;
  return nav?.gpu ?? undefined;
}

/** A load failure of `specifier` that means "not installed" (rather than "installed, but broken"). */
export function isModuleNotFound(err: unknown, specifier: string): boolean {
  const e = err as { code?: string; message?: string };
  return (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && String(e.message).includes(specifier);
}

/**
 * navigator.gpu for tfjs-backend-webgpu, which registers its backend only if navigator.gpu exists when its module
 * loads. In a browser (or wherever navigator.gpu exists) that one is used. Under Node it is Dawn's `create([])`,
 * with Dawn's globals (GPUBufferUsage, …) added where absent. Node 21+ has its own `navigator` (a getter on
 * globalThis): `gpu` is defined on it with Object.defineProperty; Node 20 has none, so one is defined.
 * Throws a message (string) saying what to install when Dawn's binding is missing or fails to load.
 */
async function provideNavigatorGpu(): Promise<GpuLike> {
  const existing = navigatorGpu();
  if (existing !== undefined) return existing;
  if (!isNode) throw new Error('this runtime has no navigator.gpu (WebGPU)');
  let dawn: DawnBinding;
  try {
    dawn = (await import(/* @vite-ignore */ DAWN)) as DawnBinding;
  } catch (err) {
    if (isModuleNotFound(err, DAWN))
      throw new Error(
        `under Node it needs Dawn's binding, npm package webgpu, which is not installed: run \`${WEBGPU_INSTALL}\``,
      );
    throw new Error(
      `the npm package webgpu is installed but its dawn.node failed to load (webgpu@0.6.2 needs GLIBCXX_3.4.30; ` +
        `0.5.0–0.6.1 need 3.4.32, which Debian 12 lacks): ${(err as Error).message}`,
    );
  }
  for (const [key, value] of Object.entries(dawn.globals)) {
    if (!(key in globalThis)) Object.defineProperty(globalThis, key, { value, configurable: true, writable: true });
  }
  const gpu = dawn.create([]);
  const g = globalThis as { navigator?: object };
  if (g.navigator === undefined) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  } else {
    Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true, writable: true });
  }
  ours = gpu;
  return gpu;
}

/**
 * Drop the navigator.gpu that this package set under Node (a no-op otherwise), so that nothing here keeps Dawn's
 * GPU object referenced: Node does not exit while it is. The 'webgpu' backend, once created, keeps its own device;
 * call `tf.removeBackend('webgpu')` first to let that go too.
 */
export function releaseNavigatorGpu(): void {
  if (ours === undefined) return;
  const nav = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator;
  if (nav !== undefined && nav.gpu === ours) {
    if (Object.keys(nav).length === 1 && Object.getOwnPropertyDescriptor(globalThis, 'navigator')?.configurable) {
      delete (globalThis as { navigator?: unknown }).navigator; // the one defined above (Node 20)
    } else {
      delete nav.gpu;
    }
  }
  ours = undefined;
}

/** Why there is no adapter, and what to do. */
export const NO_ADAPTER =
  'WebGPU found no adapter: Dawn accepts no Vulkan device here. With an NVIDIA GPU its Vulkan driver (ICD JSON) ' +
  'must be visible (check `vulkaninfo --summary`); without a GPU, install the software driver lavapipe: ' +
  LAVAPIPE_INSTALL;

/**
 * The adapter that tfjs-backend-webgpu will get (it asks for 'high-performance'), described; Node's navigator.gpu
 * is set up first. Throws a message (Error) saying what is missing: Dawn's binding, or any adapter.
 */
export async function requestWebgpuAdapter(): Promise<WebgpuAdapterInfo> {
  const gpu = await provideNavigatorGpu();
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (adapter === null) {
    releaseNavigatorGpu();
    throw new Error(NO_ADAPTER);
  }
  return adapterInfo(adapter);
}
