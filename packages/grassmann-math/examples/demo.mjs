// A tour of @grassflow/grassmann-math. Run from the repo root: `pnpm demo` (builds the package first).
import {
  chordalDistance,
  geodesicDistance,
  gpuJsBackendMode,
  normalizePlucker,
  planeFromPlucker,
  plucker,
  pluckerBatch,
  pluckerRelationsResidual,
  principalAngles,
  projectionDistance,
  releaseGpuJsKernels,
} from '../dist/index.js';

const fmt = (xs) => '[' + Array.from(xs, (x) => x.toFixed(4)).join(', ') + ']';

// 1. Plücker coordinates of span(u, v) ⊂ R^4, order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3).
const u = [1, 2, 3, 4];
const v = [0.5, -1, 2, 0];
const p = plucker(u, v);
console.log(`plucker(u, v)            = ${fmt(p)}`);
console.log(`normalised p̂             = ${fmt(normalizePlucker(p))}`);

// 2. The Plücker relation p01 p23 − p02 p13 + p03 p12 = 0 holds exactly for a wedge u ∧ v.
console.log(`relations residual(u∧v)  = ${pluckerRelationsResidual(p, 4).toExponential(2)}  (a point of Gr(2,4))`);
console.log(
  `residual(e0∧e1 + e2∧e3)  = ${pluckerRelationsResidual([1, 0, 0, 0, 0, 1], 4).toFixed(4)}  (not decomposable)`,
);
const { u: q1, v: q2, scale } = planeFromPlucker(p, 4);
console.log(`recovered basis: ‖p‖ = ${scale.toFixed(4)}, u = ${fmt(q1)}, v = ${fmt(q2)}`);

// 3. Principal angles and distances between two planes in R^4 (subspaces as lists of column vectors).
const A = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
];
const B = [
  [Math.cos(0.3), 0, Math.sin(0.3), 0],
  [0, Math.cos(1.1), 0, Math.sin(1.1)],
];
console.log(`principal angles (rad)   = ${fmt(principalAngles(A, B))}   (built as 0.3 and 1.1)`);
console.log(
  `distances: geodesic ${geodesicDistance(A, B).toFixed(4)}, chordal ${chordalDistance(A, B).toFixed(4)}, ` +
    `projection ${projectionDistance(A, B).toFixed(4)}`,
);

// 4. Batch Plücker coordinates, as in the neural layer: [N, r] × [N, r] → [N, r(r−1)/2].
const N = 20_000;
const r = 32;
const zPrev = Float32Array.from({ length: N * r }, () => Math.random() * 2 - 1);
const zCur = Float32Array.from({ length: N * r }, () => Math.random() * 2 - 1);
const out = new Float32Array((N * r * (r - 1)) / 2).fill(0); // fill: fault the pages in before timing
for (const backend of ['ts', 'gpujs']) {
  pluckerBatch(zPrev.subarray(0, 1000 * r), zCur.subarray(0, 1000 * r), 1000, r, { backend, out }); // warm-up
  let s = Infinity;
  for (let rep = 0; rep < 3; rep++) {
    const t0 = performance.now();
    pluckerBatch(zPrev, zCur, N, r, { backend, out });
    s = Math.min(s, (performance.now() - t0) / 1000);
  }
  const name = backend === 'gpujs' ? `gpujs (${gpuJsBackendMode()})` : 'ts';
  console.log(
    `pluckerBatch N=${N}, r=${r}, ${name.padEnd(15)}: ${(s * 1000).toFixed(1)} ms (best of 3), ${(N / s / 1e6).toFixed(2)} Mpairs/s`,
  );
}
await releaseGpuJsKernels();
