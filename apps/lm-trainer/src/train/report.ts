// report.md of one run: final numbers, training loss and validation perplexity curves.
import {
  evalMetricChart,
  gradNormChart,
  learningRateChart,
  metricCurve,
  metricOf,
  reportRun,
} from '@grassflow/training';
import { backendLine, trainingLossChart, warmupSteps } from '@grassflow/training';
import type { ChartSeries, RunFolder } from '@grassflow/training';
import { evalCoverage, type RunConfig } from './config.js';
import { baselineSeries, smoothingLines, standingLines, validationBaselines, xRange } from '../baselines/report.js';

/**
 * Write report.md (+ loss, lr, grad-norm and val-ppl as .svg/.png) into the run folder, with the n-gram baselines on
 * the run's validation ids (cached) as reference lines and words on where the run's best validation PPL stands.
 */
export async function writeRunReport(run: RunFolder, cfg: RunConfig): Promise<string> {
  const m = cfg.model;
  const baselines = await validationBaselines(cfg.data);
  const withBaselines = (curves: ChartSeries[]): ChartSeries[] =>
    baselines === undefined ? curves : [...curves, ...baselineSeries(baselines, ...xRange(curves))];
  return reportRun(run, 'val_ppl', (s) => {
    const bestPpl = metricOf(s.best, 'val_ppl');
    return {
      title: `${cfg.modelKind} on WikiText-2 (${cfg.preset})`,
      intro: [
        `Command: \`${cfg.command}\``,
        `Model: ${m.kind}${m.kind === 'transformer' ? ` (${m.attention})` : ` (r ${m.r}, offsets ${JSON.stringify(m.offsets)})`}, ${m.nLayers} layers, d ${m.dModel}, ` +
          `d_ff ${m.dFF}, maxLen ${m.maxLen}, V ${m.vocabSize}, ${m.norm}-LN, dropout ${m.dropout}; ${cfg.params.toLocaleString('en-US')} parameters.`,
        `Training: ${cfg.totalSteps} steps of ${cfg.training.batch}×${cfg.training.seqLen} tokens, AdamW (β ${cfg.training.beta1}/${cfg.training.beta2}, ` +
          `weight decay ${cfg.training.weightDecay}), lr ${cfg.training.lr} with ${warmupSteps(cfg.training, cfg.totalSteps)} warmup steps and cosine decay to ${cfg.training.minLr}, ` +
          `clip ${cfg.training.clip}, seed ${cfg.training.seed}. Tokenizer ${cfg.data.tokenizer}; ${evalCoverage(cfg)}. ` +
          `Backend ${backendLine(cfg.backend)}; git ${cfg.git ?? 'unknown'}.`,
        ...(cfg.history ?? []).map(
          (h) =>
            `Extended on ${h.time} from ${h.fromSteps} to ${h.toSteps} steps at step ${h.atStep} ` +
            `(${JSON.stringify(h.length)}): ` +
            `the cosine decay runs over the new total from there.`,
        ),
      ],
      table: {
        columns: [
          'steps',
          'train tokens',
          'last train loss',
          'last val PPL',
          'best val PPL',
          'best at step',
          'train tokens/s (median)',
        ],
        rows: [
          [
            s.steps,
            s.tokens,
            s.lastLoss,
            metricOf(s.lastEval, 'val_ppl'),
            metricOf(s.best, 'val_ppl'),
            s.best?.step ?? null,
            s.tokensPerSec === null ? null : Math.round(s.tokensPerSec),
          ],
        ],
      },
      charts: [
        trainingLossChart([{ name: cfg.modelKind, points: s.train }]),
        learningRateChart([{ name: cfg.modelKind, points: s.lr }]),
        gradNormChart([{ name: cfg.modelKind, points: s.gradNorm }], cfg.training.clip),
        evalMetricChart(
          'val-ppl',
          'Validation perplexity',
          'PPL',
          withBaselines([{ name: cfg.modelKind, points: metricCurve(s.evals, 'val_ppl') }]),
          true,
        ),
      ],
      notes: [
        ...(baselines === undefined || bestPpl === null
          ? []
          : [
              `Against n-gram baselines fitted on ${cfg.data.trainFiles === undefined ? 'wiki.train' : 'the training text'} ` +
                'and scored on the same validation ids ' +
                '(`grassflow-lm baselines` scores whole splits):\n' +
                standingLines([{ name: cfg.modelKind, ppl: bestPpl }], baselines, 'best validation PPL') +
                `\n${smoothingLines(baselines)}`,
            ]),
        'Test perplexity: `grassflow-lm eval --checkpoint ' + run.bestCheckpoint + ' --split test`.',
      ],
    };
  });
}
