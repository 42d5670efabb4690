// Per-window NLL sums of a held-out scoring, kept compactly in a ledger record (float32, base64) for the paired
// bootstrap over test windows, and the target counts of those windows (a function of the split's length and the
// window layout, the same for every run, so not stored).

/** A scoring's per-window NLL sums by band of window positions, as a record stores them. */
export interface WindowNll {
  /** Window length L and new targets per window (stride; L: non-overlapping windows). */
  seqLen: number;
  stride: number;
  /** Upper edges of the position bands (1-based, the last ≥ L): band j holds positions edge[j − 1] + 1 … edge[j]. */
  bandEdges: number[];
  /** Windows scored: ⌈targets / stride⌉. */
  windows: number;
  /** float32 little-endian, base64: windows × bands NLL sums (nats), row-major [window][band]. */
  sums: string;
}

/** Store per-window band sums (float64, [window][band]) as a {@link WindowNll}. */
export function encodeWindowNll(
  sums: Float64Array,
  layout: { seqLen: number; stride: number; bandEdges: readonly number[] },
): WindowNll {
  const bands = layout.bandEdges.length;
  if (bands === 0 || sums.length % bands !== 0)
    throw new Error(`${sums.length} window sums are not a whole number of windows of ${bands} bands`);
  const f32 = Float32Array.from(sums);
  const bytes = Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength);
  return { ...layout, bandEdges: [...layout.bandEdges], windows: sums.length / bands, sums: bytes.toString('base64') };
}

/** The sums of a {@link WindowNll}, [window][band] row-major (an error when their size disagrees with the layout). */
export function decodeWindowNll(w: WindowNll): Float32Array {
  const bytes = Buffer.from(w.sums, 'base64');
  const n = w.windows * w.bandEdges.length;
  if (bytes.length !== n * 4)
    throw new Error(
      `window sums hold ${bytes.length} bytes where ${w.windows} windows × ${w.bandEdges.length} bands need ${n * 4}`,
    );
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = bytes.readFloatLE(4 * i);
  return out;
}

/**
 * Targets of each window and band, [window][band] row-major, for a split of `targets` targets (N − 1 for N ids)
 * scored as lmEvalBatches lays windows out: window k scores targets t = ks + 1 … min(ks + s, N − 1), target t at
 * row position t − max(0, ks + s − L) (1-based).
 */
export function windowCounts(targets: number, w: Pick<WindowNll, 'seqLen' | 'stride' | 'bandEdges'>): Float64Array {
  const { seqLen: L, stride: s, bandEdges: edges } = w;
  const K = targets < 1 ? 0 : Math.ceil(targets / s);
  const nb = edges.length;
  const out = new Float64Array(K * nb);
  for (let k = 0; k < K; k++) {
    const start = Math.max(0, k * s + s - L);
    const tEnd = Math.min(k * s + s, targets);
    for (let t = k * s + 1; t <= tEnd; t++) {
      const pos = t - start; // 1-based window position
      const band = edges.findIndex((e) => pos <= e);
      if (band < 0) throw new Error(`window position ${pos} lies beyond the last band edge ${edges[nb - 1]}`);
      out[k * nb + band] = (out[k * nb + band] as number) + 1;
    }
  }
  return out;
}

/** Column `band` of a [window][band] table (all bands summed when `band` is null). */
export function bandColumn(table: ArrayLike<number>, bands: number, band: number | null): Float64Array {
  const K = table.length / bands;
  const out = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    if (band !== null) out[k] = table[k * bands + band] as number;
    else for (let j = 0; j < bands; j++) out[k] = (out[k] as number) + (table[k * bands + j] as number);
  }
  return out;
}
