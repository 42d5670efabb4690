// Adaptive softmax head (Grave et al. 2017, "Efficient softmax approximation for GPUs"), with PyTorch's
// nn.AdaptiveLogSoftmaxWithLoss (div_value 4, no head bias) as the reference behaviour and tensor layout.
import * as tf from '@tensorflow/tfjs-core';
import { adaptiveHeadShapes } from '../config/model-config.js';
import { crossEntropy, logSumExp, tokenNll } from '../loss/loss.js';
import { matmul } from '../ops/ops.js';
import { INIT_STD, tfjsSeed, type NamedParam } from '../layers/param-layer.js';

/** First seed stream of the head's weights (the embeddings use 0 and 1, block i uses 100·(i + 1) onwards). */
const HEAD_SEED_OFFSET = 50;

/** One tail cluster: tokens [start, end) behind the head's logit c_1 + i, through a rank-d_i projection. */
interface TailCluster {
  start: number;
  end: number;
  /** [d, d_i] (internal [in, out]; nn.Linear's weight is its transpose). */
  proj: tf.Variable<tf.Rank.R2>;
  /** [d_i, end − start]. */
  out: tf.Variable<tf.Rank.R2>;
}

/**
 * log p(w | h) of an adaptive softmax over V words split by cutoffs c_1 < … < c_k into a shortlist [0, c_1) and tail
 * clusters [c_i, c_{i+1}): log p(w) = log softmax(h·W_head)[w] for w < c_1, and
 * log p(w) = log softmax(h·W_head)[c_1 + i] + log softmax(h·P_i·O_i)[w − c_i] for w in cluster i.
 * The probabilities are exact (they sum to 1 over the vocabulary); training touches a tail only for the tokens whose
 * target lies in it, which on Zipfian text is a small share, so the head costs far less than a full V-way softmax.
 *
 * The clusters are ranges of frequency ranks, so the head needs the vocabulary in order of decreasing frequency;
 * tokenizer ids rarely are (BERT's first 2,000 ids are mostly [unused] slots and single characters). The head keeps
 * that order (rank → token id, {@link frequencyOrder} of the training ids; identity until set) and works in rank space:
 * log p(id) = log p_rank(rank(id)).
 *
 * Tensor names (a PyTorch AdaptiveLogSoftmaxWithLoss module's state dict under the prefix `adaptive.`, weights in
 * nn.Linear's [out, in]): adaptive.head.weight [c_1 + k, d], adaptive.tail.{i}.0.weight [d_i, d] (projection),
 * adaptive.tail.{i}.1.weight [c_{i+1} − c_i, d_i] (cluster output), d_i = max(1, ⌊d / 4^(i+1)⌋); and the buffer
 * adaptive.order [V] (float32, exact for V < 2^24: the token id of each rank, not trained).
 */
export class AdaptiveSoftmaxHead {
  readonly cutoffs: readonly number[];
  readonly vocabSize: number;
  /** Shape [d, c_1 + k]: the shortlist's logits, then one logit per tail cluster. */
  private readonly head: tf.Variable<tf.Rank.R2>;
  private readonly tails: TailCluster[];
  /** rank → token id, and its inverse id → rank (host copies: targets are mapped without a device read). */
  private order: Int32Array;
  private rankOf: Int32Array;
  /** id → rank on the device, to put log-probabilities back in id order; null while the order is the identity. */
  private rankOfTensor: tf.Tensor1D | null = null;

  constructor(d: number, vocabSize: number, cutoffs: readonly number[], seed: number | undefined) {
    const shapes = adaptiveHeadShapes(d, vocabSize, cutoffs);
    this.cutoffs = [...cutoffs];
    this.vocabSize = vocabSize;
    this.order = Int32Array.from({ length: vocabSize }, (_, i) => i);
    this.rankOf = this.order.slice();
    let stream = HEAD_SEED_OFFSET;
    const normal = (inDim: number, outDim: number): tf.Variable<tf.Rank.R2> => {
      const init = tf.randomNormal<tf.Rank.R2>([inDim, outDim], 0, INIT_STD, 'float32', tfjsSeed(seed, stream++));
      const v = tf.variable(init);
      init.dispose();
      return v;
    };
    this.head = normal(d, shapes.head[0]);
    const bounds = [...cutoffs, vocabSize];
    this.tails = shapes.tails.map((t, i) => ({
      start: bounds[i] as number,
      end: bounds[i + 1] as number,
      proj: normal(d, t.proj[0]),
      out: normal(t.proj[0], t.out[0]),
    }));
  }

  /** The head's parameters under their documented names (linear: stored [in, out], exported [out, in]). */
  namedParams(): NamedParam[] {
    const out: NamedParam[] = [{ name: 'adaptive.head.weight', variable: this.head, linear: true }];
    this.tails.forEach((t, i) => {
      out.push({ name: `adaptive.tail.${i}.0.weight`, variable: t.proj, linear: true });
      out.push({ name: `adaptive.tail.${i}.1.weight`, variable: t.out, linear: true });
    });
    return out;
  }

  /** The vocabulary order, rank → token id (a copy). */
  get vocabOrder(): Int32Array {
    return this.order.slice();
  }

  /** Set the vocabulary order: `order[k]` is the token id of frequency rank k, a permutation of 0 … V − 1. */
  setVocabOrder(order: ArrayLike<number>): void {
    const V = this.vocabSize;
    const rankOf = new Int32Array(V).fill(-1);
    if (order.length !== V) throw new RangeError(`vocabulary order: ${order.length} ids for V = ${V}`);
    for (let k = 0; k < V; k++) {
      const id = order[k] as number;
      if (!Number.isInteger(id) || id < 0 || id >= V || rankOf[id] !== -1) {
        throw new RangeError(
          `vocabulary order: entry ${k} (${id}) is not a new token id in [0, ${V}): not a permutation`,
        );
      }
      rankOf[id] = k;
    }
    this.order = Int32Array.from(order);
    this.rankOf = rankOf;
    this.rankOfTensor?.dispose();
    this.rankOfTensor = this.order.every((id, k) => id === k) ? null : tf.tensor1d(rankOf, 'int32');
  }

  /** The buffer adaptive.order [V] as a new float32 tensor (the caller disposes). */
  orderTensor(): tf.Tensor1D {
    return tf.tensor1d(Float32Array.from(this.order), 'float32');
  }

  /** log p(w | x) for every word, in token id order: x [N, d] → [N, V] (rows sum to 1 after exp). */
  logProbs(x: tf.Tensor2D): tf.Tensor2D {
    return tf.tidy(() => {
      const c1 = this.cutoffs[0] as number;
      const headLogits = matmul(x, this.head); // [N, c_1 + k]
      const headLp = tf.sub<tf.Tensor2D>(headLogits, logSumExp(headLogits)); // [N, c_1 + k]
      const parts: tf.Tensor2D[] = [tf.slice(headLp, [0, 0], [-1, c1])]; // [N, c_1] shortlist
      this.tails.forEach((_tail, i) => {
        const logits = this.tailLogits(i, x); // [N, size_i]
        const clusterLp = tf.slice(headLp, [0, c1 + i], [-1, 1]); // [N, 1] log p(cluster i)
        parts.push(tf.add(clusterLp, tf.sub(logits, logSumExp(logits)))); // [N, size_i]
      });
      const byRank = tf.concat<tf.Tensor2D>(parts, 1); // [N, V], column k = rank k
      return this.rankOfTensor === null ? byRank : tf.gather<tf.Tensor2D>(byRank, this.rankOfTensor, 1); // id order
    });
  }

  /**
   * Rows by cluster for targets t (host ids, mapped to ranks): the head's target of each row (its rank in the
   * shortlist, else c_1 + its cluster), and per tail cluster the rows whose target lies in it and their rank there.
   */
  private partition(targets: Int32Array): { head: Int32Array; rows: number[][]; rel: number[][] } {
    const c1 = this.cutoffs[0] as number;
    const head = new Int32Array(targets.length);
    const rows: number[][] = this.tails.map(() => []);
    const rel: number[][] = this.tails.map(() => []);
    for (let n = 0; n < targets.length; n++) {
      const id = targets[n] as number;
      if (!(id >= 0 && id < this.vocabSize)) {
        throw new RangeError(`target ${id} at row ${n} is outside [0, ${this.vocabSize})`);
      }
      const t = this.rankOf[id] as number; // the clusters are ranges of frequency ranks
      if (t < c1) {
        head[n] = t;
        continue;
      }
      let i = 0;
      while (t >= (this.tails[i] as TailCluster).end) i++;
      head[n] = c1 + i;
      (rows[i] as number[]).push(n);
      (rel[i] as number[]).push(t - (this.tails[i] as TailCluster).start);
    }
    return { head, rows, rel };
  }

  private checkRows(x: tf.Tensor2D, targets: Int32Array): void {
    if (targets.length !== x.shape[0]) {
      throw new RangeError(`adaptive head: ${targets.length} targets for ${x.shape[0]} rows`);
    }
  }

  /** Logits of cluster i for rows x [n, d]: x·P_i·O_i → [n, size_i]. */
  private tailLogits(i: number, x: tf.Tensor2D): tf.Tensor2D {
    const t = this.tails[i] as TailCluster;
    return matmul(matmul(x, t.proj), t.out); // [n, d_i] → [n, size_i]
  }

  /**
   * Mean NLL ℓ = (1/N) Σ_n −log p(t_n | x_n) of targets t (host ids: which cluster each row needs is decided here,
   * without a device read): the head's cross-entropy over all N rows plus, for each tail cluster i, the
   * cross-entropy of its n_i rows weighted n_i/N. x [N, d] → scalar; differentiable (gradients flow into x and
   * into every weight a row used).
   */
  loss(x: tf.Tensor2D, targets: Int32Array): tf.Scalar {
    this.checkRows(x, targets);
    const N = x.shape[0];
    const { head, rows, rel } = this.partition(targets);
    return tf.tidy(() => {
      let loss = crossEntropy(matmul(x, this.head), tf.tensor1d(head, 'int32')); // mean over N
      this.tails.forEach((t, i) => {
        const r = rows[i] as number[];
        if (r.length === 0) {
          // no target in this cluster: its weights get a zero gradient (an optimizer then sees every parameter)
          loss = tf.add(loss, tf.mul(tf.add(tf.sum(t.proj), tf.sum(t.out)), 0));
          return;
        }
        const xi = tf.gather(x, tf.tensor1d(r, 'int32')); // [n_i, d] rows whose target lies in cluster i
        const ce = crossEntropy(this.tailLogits(i, xi), tf.tensor1d(rel[i] as number[], 'int32')); // mean over n_i
        loss = tf.add(loss, tf.mul(ce, r.length / N));
      });
      return loss;
    });
  }

  /**
   * −log p(t_n | x_n) of each row, x [N, d] → [N]: the head's NLL plus, for rows in a tail cluster, the cluster's
   * (scattered back to their rows). The same terms as {@link AdaptiveSoftmaxHead.loss}, without the [N, V] table
   * that {@link AdaptiveSoftmaxHead.logProbs} builds, so evaluation costs what training's forward pass does.
   */
  nll(x: tf.Tensor2D, targets: Int32Array): tf.Tensor1D {
    this.checkRows(x, targets);
    const N = x.shape[0];
    const { head, rows, rel } = this.partition(targets);
    return tf.tidy(() => {
      let nll = tokenNll(matmul(x, this.head), tf.tensor1d(head, 'int32')); // [N]
      rows.forEach((r, i) => {
        if (r.length === 0) return;
        const at = tf.tensor1d(r, 'int32');
        const tail = tokenNll(this.tailLogits(i, tf.gather(x, at)), tf.tensor1d(rel[i] as number[], 'int32')); // [n_i]
        nll = tf.add(nll, tf.scatterND(tf.reshape(at, [r.length, 1]), tail, [N]));
      });
      return nll;
    });
  }

  dispose(): void {
    this.rankOfTensor?.dispose();
    this.head.dispose();
    for (const t of this.tails) {
      t.proj.dispose();
      t.out.dispose();
    }
  }
}

/**
 * Token ids by decreasing frequency in `ids` (ties by increasing id; ids that never occur last): the vocabulary order
 * an adaptive head's clusters need, rank → id.
 */
export function frequencyOrder(ids: ArrayLike<number>, vocabSize: number): Int32Array {
  const counts = new Float64Array(vocabSize);
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k] as number;
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new RangeError(`frequencyOrder: id ${id} at ${k} is outside [0, ${vocabSize})`);
    }
    counts[id] = (counts[id] as number) + 1;
  }
  return Int32Array.from({ length: vocabSize }, (_, i) => i).sort(
    (a, b) => (counts[b] as number) - (counts[a] as number) || a - b,
  );
}
