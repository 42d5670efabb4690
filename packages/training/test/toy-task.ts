// A deterministic TrainTask for the loop and lifecycle tests: batch k is a pure function of k.
import * as tf from '@tensorflow/tfjs-core';
import { lmLoss, type LanguageModel } from '@grassflow/gpu-layers';
import { TrainingRng, type ResumableTask } from '@grassflow/training';

/** Random ids from a PRNG seeded by the batch index; validation improves as 1 / (1 + position). */
export class ToyTask implements ResumableTask<{ position: number }> {
  position = 0;
  constructor(private readonly model: LanguageModel) {}
  nextBatch() {
    const rng = new TrainingRng(this.position++);
    const ids = Array.from({ length: 4 * 9 }, () => rng.nextUint32() % 64);
    const x = ids.filter((_, i) => i % 9 !== 8);
    const y = ids.filter((_, i) => i % 9 !== 0);
    const loss = () =>
      lmLoss(this.model.apply(tf.tensor2d(x, [4, 8], 'int32'), { training: true }), tf.tensor2d(y, [4, 8], 'int32'));
    return { tokens: 32, loss };
  }
  dataState() {
    return { position: this.position };
  }
  restore(data: { position: number }) {
    this.position = data.position;
  }
  evaluate() {
    return Promise.resolve({ val: 1 / (1 + this.position) });
  }
}
