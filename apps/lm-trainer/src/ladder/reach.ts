// What a stack of causal Grassmann layers can see: its reachable lags, its receptive field, and which targets need
// more.
import type { SyntheticTask } from '@grassflow/datasets';

/**
 * Lags (positions back from an input position t) that the output at t of a stack of Grassmann layers depends on.
 * A layer with offsets O mixes h_t with g_t(z_{t−Δ}, z_t), Δ ∈ O, and everything else is position-wise, so after
 * layers 1..N the output at t depends exactly on h_{t−s}, s = Σ_i c_i with c_i ∈ {0} ∪ O_i: the subset sums.
 */
export function grassmannReach(offsets: ReadonlyArray<readonly number[]>): number[] {
  let reach = new Set<number>([0]);
  for (const layer of offsets) {
    const next = new Set(reach);
    for (const s of reach) for (const d of layer) next.add(s + d);
    reach = next;
  }
  return [...reach].sort((a, b) => a - b);
}

/**
 * Receptive field R = Σ_i max(O_i): the furthest lag any output can depend on (one offset a layer: the sum of offsets).
 */
export function receptiveField(offsets: ReadonlyArray<readonly number[]>): number {
  return offsets.reduce((s, layer) => s + Math.max(...layer), 0);
}

/**
 * Fraction of the determined targets of sequences 0 .. n − 1 whose rule inputs all lie at reachable lags of the input
 * position p = t − 1 (lagged-sum: lags a_i − 1; recall: both the key and the value of an earlier occurrence of the
 * queried pair). Outside that set the target is independent of everything the model sees (lagged-sum: any 17
 * consecutive tokens are jointly uniform), so the expected accuracy there is chance: an upper bound by construction.
 */
export function reachableFraction(task: SyntheticTask, reach: readonly number[], n: number): number {
  const can = new Set(reach);
  let ok = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const { tokens, determined } = task.sequence(i);
    for (let t = 1; t < tokens.length; t++) {
      if (determined[t] !== 1) continue;
      total++;
      const p = t - 1;
      if (task.family === 'lagged-sum') {
        if (task.lags.every((a) => can.has(a - 1))) ok++;
      } else {
        // an earlier (key, value) pair at (j, j + 1), j + 1 < t, with the queried key tokens[p] and the answer
        // tokens[t]
        for (let j = p - 2; j >= 0; j--) {
          if (tokens[j] === tokens[p] && tokens[j + 1] === tokens[t] && can.has(p - j) && can.has(p - j - 1)) {
            ok++;
            break;
          }
        }
      }
    }
  }
  return total === 0 ? 0 : ok / total;
}
