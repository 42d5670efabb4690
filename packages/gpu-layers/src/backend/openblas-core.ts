// Which of OpenBLAS's CPU kernels the native products run. A DYNAMIC_ARCH OpenBLAS (Debian's, Ubuntu's, Fedora's)
// picks its kernels once, when it is loaded, from cpuid; a release older than the CPU does not know the model and falls
// back to a generic core: 0.3.21 on an Intel family 6 model 207 runs its Prescott kernels (SSE3), 34 GFLOP/s on two
// threads where its SkylakeX kernels run 264 (docs/benchmarks.md). Node-only (reads /proc/cpuinfo or sysctl).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What the kernel choice needs to know of the CPU. */
export interface CpuFeatures {
  vendor: 'intel' | 'amd' | 'other';
  /** The model name as the OS reports it ('Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz', 'AMD EPYC'). */
  model: string;
  avx2: boolean;
  avx512f: boolean;
}

/**
 * OpenBLAS's x86 cores whose kernels use no AVX2: its generic fallback (Prescott) and the targets before Haswell
 * (Intel) and Excavator (AMD). Lower case, as OpenBLAS compares OPENBLAS_CORETYPE.
 */
const PRE_AVX2_CORES = new Set([
  'katmai',
  'coppermine',
  'northwood',
  'prescott',
  'banias',
  'atom',
  'core2',
  'penryn',
  'dunnington',
  'nehalem',
  'sandybridge',
  'athlon',
  'opteron',
  'opteron_sse3',
  'barcelona',
  'bobcat',
  'bulldozer',
  'piledriver',
  'steamroller',
]);

/** /proc/cpuinfo's first processor (Linux) as {@link CpuFeatures}; undefined when it names no x86 flags. */
export function parseCpuinfo(text: string): CpuFeatures | undefined {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim();
  const flags = field('flags');
  if (flags === undefined) return undefined;
  const set = new Set(flags.split(/\s+/));
  return {
    vendor: vendorOf(field('vendor_id') ?? ''),
    model: field('model name') ?? 'unknown CPU',
    avx2: set.has('avx2'),
    avx512f: set.has('avx512f'),
  };
}

function vendorOf(id: string): CpuFeatures['vendor'] {
  if (/GenuineIntel/i.test(id)) return 'intel';
  if (/AuthenticAMD|HygonGenuine/i.test(id)) return 'amd';
  return 'other';
}

/** This machine's CPU (x86 Linux and macOS); undefined elsewhere or when the OS does not say. */
export function cpuFeatures(): CpuFeatures | undefined {
  if (process.arch !== 'x64' && process.arch !== 'ia32') return undefined;
  try {
    if (process.platform === 'linux') return parseCpuinfo(readFileSync('/proc/cpuinfo', 'utf8'));
    if (process.platform === 'darwin') {
      const sysctl = (key: string) => execFileSync('sysctl', ['-n', key], { encoding: 'utf8', timeout: 2000 }).trim();
      const features = `${sysctl('machdep.cpu.features')} ${sysctl('machdep.cpu.leaf7_features')}`.toUpperCase();
      return {
        vendor: vendorOf(sysctl('machdep.cpu.vendor')),
        model: sysctl('machdep.cpu.brand_string'),
        avx2: /\bAVX2\b/.test(features),
        avx512f: /\bAVX512F\b/.test(features),
      };
    }
  } catch {
    return undefined; // no /proc (a sandbox), no sysctl: keep OpenBLAS's own choice
  }
  return undefined;
}

/**
 * The OPENBLAS_CORETYPE to load OpenBLAS under, where its own detection chose a core without AVX2 on a CPU that has
 * AVX2 or AVX-512F: SkylakeX (Intel with AVX-512F), Zen (AMD), Haswell (otherwise). Undefined: keep its choice.
 */
export function betterOpenblasCore(detected: string, cpu: CpuFeatures): string | undefined {
  if (!PRE_AVX2_CORES.has(detected.toLowerCase()) || !cpu.avx2) return undefined;
  if (cpu.vendor === 'amd') return 'Zen';
  if (cpu.vendor === 'intel' && cpu.avx512f) return 'SkylakeX';
  return 'Haswell';
}

/** The CPU's widest vector extension, for the note: 'AVX-512F' or 'AVX2'. */
export function vectorWidthOf(cpu: CpuFeatures): string {
  return cpu.avx512f ? 'AVX-512F' : cpu.avx2 ? 'AVX2' : 'no AVX2';
}
