// report.md of one run: parameter counts, final validation numbers, loss and accuracy curves.
import { backendLine, evalMetricChart, metricCurve, metricOf, reportRun, trainingLossChart } from '@grassflow/training';
import type { RunFolder } from '@grassflow/training';
import type { RunConfig } from './config.js';

/** Write report.md (+ loss.svg/png, val-acc.svg/png) into the run folder. */
export function writeRunReport(run: RunFolder, cfg: RunConfig): Promise<string> {
  const t = cfg.training;
  const h = cfg.model.head;
  return reportRun(run, 'val_loss', (s) => ({
    title: `SNLI: ${cfg.head} head, backbone ${cfg.backbone}`,
    intro: [
      `Command: \`${cfg.command}\``,
      `Head: ${h.kind}, d ${h.dModel}, ${h.nLayers} layers, ${h.nHeads} heads, d_ff ${h.dFF}, dropout ${h.dropout}` +
        `${h.kind === 'grassmann' ? `, windows of ${h.window} (stride ${h.window}), r ${h.r} per head` : ''}; input width ${h.inputDim}. ` +
        `Parameters: head ${cfg.params.head.toLocaleString('en-US')}, trainable backbone ${cfg.params.backbone.toLocaleString('en-US')}, total ${cfg.params.total.toLocaleString('en-US')}.`,
      `Training: ${cfg.totalSteps} steps (${t.epochs} epochs, batch ${t.batch} pairs), AdamW (β ${t.beta1}/${t.beta2}, weight decay ${t.weightDecay}), lr ${t.lr} ` +
        `with ${t.warmup} warmup steps and cosine decay to ${t.minLr}, clip ${t.clip}, seed ${t.seed}, seqLen ${t.seqLen} (tokens kept per sentence). ` +
        `Train ${cfg.data.trainPairs.toLocaleString('en-US')} pairs (${cfg.data.trainFile}${cfg.data.trainIsSample ? ', the 1% sample' : ''}); ` +
        `validation on ${cfg.data.validPairs.toLocaleString('en-US')} pairs of ${cfg.data.validFile}. Backend ${backendLine(cfg.backend)}; git ${cfg.git ?? 'unknown'}.`,
    ],
    table: {
      columns: ['steps', 'last train loss', 'best val loss', 'val acc at best', 'best at step', 'last val acc'],
      rows: [
        [
          s.steps,
          s.lastLoss,
          metricOf(s.best, 'val_loss'),
          metricOf(s.best, 'val_acc'),
          s.best?.step ?? null,
          metricOf(s.lastEval, 'val_acc'),
        ],
      ],
    },
    charts: [
      trainingLossChart([{ name: cfg.head, points: s.train }]),
      evalMetricChart('val-acc', 'Validation accuracy', 'accuracy', [
        { name: cfg.head, points: metricCurve(s.evals, 'val_acc') },
      ]),
    ],
    notes: [
      `Dev and test accuracy of the best checkpoint: \`grassflow-snli eval --checkpoint ${run.dir} --split dev\` (and \`--split test\`).`,
    ],
  }));
}
