// inspect.json and report.md (heatmaps, histograms, trajectory, tables) of an InspectResult.
import { join } from 'node:path';
import { writeFileAtomic } from '@grassflow/checkpoints';
import {
  markdownTable,
  renderHeatmapChart,
  renderHistogramChart,
  renderLineChart,
  writeJsonAtomic,
  type HeatmapChart,
  type HistogramChart,
  type LineChart,
} from '@grassflow/training';
import type { AttentionLayerReport } from './attention.js';
import type { GrassmannLayerReport } from './grassmann.js';
import type { InspectResult } from './model.js';

/** How the report describes where the numbers came from. */
export interface InspectReportMeta {
  command: string;
  checkpoint: string;
  /** One sentence on the input, e.g. 'the text given with --text (12 tokens)'. */
  input: string;
}

type Chart =
  | { kind: 'heatmap'; chart: HeatmapChart }
  | { kind: 'histogram'; chart: HistogramChart }
  | { kind: 'line'; chart: LineChart };

async function writeChart(dir: string, file: string, c: Chart): Promise<string> {
  const { svg, png } =
    c.kind === 'heatmap'
      ? await renderHeatmapChart(c.chart)
      : c.kind === 'histogram'
        ? await renderHistogramChart(c.chart)
        : await renderLineChart(c.chart);
  await writeFileAtomic(join(dir, `${file}.svg`), new TextEncoder().encode(svg));
  await writeFileAtomic(join(dir, `${file}.png`), png);
  return `![${c.chart.title}](${file}.png)\n\n(vector: [${file}.svg](${file}.svg))`;
}

/** Fixed-point number for the tables (null → –). */
function fix(v: number | null, digits = 3): string {
  return v === null ? '–' : v.toFixed(digits);
}

/** Running sum of the non-null steps as (t, Σ_{t' ≤ t} step_{t'}) points. */
function cumulative(steps: ReadonlyArray<number | null>): Array<readonly [number, number]> {
  let sum = 0;
  return steps.flatMap((v, t) => (v === null ? [] : [[t, (sum += v)] as const]));
}

/** Three significant digits (areas span orders of magnitude). */
function sig(v: number | null): string {
  return v === null ? '–' : v.toPrecision(3);
}

/** A number rounded to `digits` decimals, kept numeric so the table right-aligns it (null → –). */
function round(v: number | null, digits = 3): number | null {
  return v === null ? null : Number(v.toFixed(digits));
}

function layerLabel(l: GrassmannLayerReport, delta: number): string {
  return l.offsets.length === 1 ? `layer ${l.layer} (Δ ${delta})` : `layer ${l.layer} Δ ${delta}`;
}

async function grassmannSections(
  dir: string,
  layers: readonly GrassmannLayerReport[],
  tokens: readonly string[],
): Promise<string[]> {
  const rows = layers.flatMap((l) => l.geometry.map((g) => ({ l, g })));
  const out: string[] = [];
  out.push(
    '## Per layer and offset',
    '',
    'α is the gate (1: the state keeps itself, 0: it is replaced by the geometric path g); geometric share: mean of ‖(1−α)⊙g‖ / (‖α⊙h‖ + ‖(1−α)⊙g‖) over positions; angles between z_{t−Δ} and z_t in degrees; ' +
      '‖p‖ the parallelogram area before normalisation; step: the geodesic distance sqrt(θ1² + θ2²) between consecutive pair-planes on Gr(2, r), in degrees. ' +
      "Ranges are 5th–95th percentiles over every position of every sample; h is the mixer's input (LN1(h) in pre-LN blocks).",
    '',
    markdownTable({
      columns: [
        'layer',
        'Δ',
        'mixer input',
        'α mean',
        'α std',
        'α 5–95%',
        'geometric share',
        'angle median',
        'angle 5–95%',
        '‖p‖ median',
        '‖p‖ 5–95%',
        'step median',
        'step 95%',
        'degenerate planes',
      ],
      rows: rows.map(({ l, g }) => [
        l.layer,
        g.delta,
        l.mixerInput,
        round(l.gate.summary.mean),
        round(l.gate.summary.std),
        `${fix(l.gate.summary.p05)}–${fix(l.gate.summary.p95)}`,
        round(l.geometricShare.summary.mean),
        round(g.summary.angleDeg.p50, 1),
        `${fix(g.summary.angleDeg.p05, 1)}–${fix(g.summary.angleDeg.p95, 1)}`,
        sig(g.summary.area.p50),
        `${sig(g.summary.area.p05)}–${sig(g.summary.area.p95)}`,
        round(g.summary.stepDeg.p50, 1),
        round(g.summary.stepDeg.p95, 1),
        g.degeneratePlanes,
      ]),
    }),
    '',
  );
  const ylabels = layers.map((l) => `layer ${l.layer}`);
  out.push('## Gate α over the text', '');
  out.push(
    await writeChart(dir, 'gate', {
      kind: 'heatmap',
      chart: {
        title: 'Gate α, mean over channels (orange > 0.5: keeps h; blue < 0.5: takes the geometric path g)',
        xLabel: 'token (sample 0)',
        yLabel: 'layer',
        xLabels: tokens,
        yLabels: ylabels,
        values: layers.map((l) => l.gate.perPosition[0] ?? []),
        colorLabel: 'mean α',
        scheme: 'blueorange',
        domainMid: 0.5,
      },
    }),
    '',
  );
  out.push(
    await writeChart(dir, 'geometric-share', {
      kind: 'heatmap',
      chart: {
        title: 'Share of h_mix from the geometric path: ‖(1−α)⊙g‖ / (‖α⊙h‖ + ‖(1−α)⊙g‖)',
        xLabel: 'token (sample 0)',
        yLabel: 'layer',
        xLabels: tokens,
        yLabels: ylabels,
        values: layers.map((l) => l.geometricShare.perPosition[0] ?? []),
        colorLabel: 'geometric share',
        domain: [0, 1],
      },
    }),
    '',
  );
  out.push('## Subspace flow along the text', '');
  const flowLabels = rows.map(({ l, g }) => layerLabel(l, g.delta));
  out.push(
    await writeChart(dir, 'flow', {
      kind: 'heatmap',
      chart: {
        title: 'Step of the pair-plane on Gr(2, r) when each token arrives (degrees)',
        xLabel: 'token (sample 0)',
        yLabel: 'layer',
        xLabels: tokens,
        yLabels: flowLabels,
        values: rows.map(({ g }) => g.stepDeg[0] ?? []),
        colorLabel: 'step (°)',
        scheme: 'inferno',
      },
    }),
    '',
    'The trajectory: the length of the path the pair-plane has travelled on Gr(2, r) (the sum of the steps above); a steeper curve is a layer whose subspace moves faster.',
    '',
    await writeChart(dir, 'trajectory', {
      kind: 'line',
      chart: {
        title: 'Trajectory on Gr(2, r): path length of the pair-plane along the text (sample 0)',
        xLabel: 'position t (plane span(z_{t−Δ}, z_t))',
        yLabel: 'path length Σ steps (degrees)',
        series: rows.map(({ l, g }) => ({ name: layerLabel(l, g.delta), points: cumulative(g.stepDeg[0] ?? []) })),
      },
    }),
    '',
  );
  out.push(
    '### Tokens that move the subspace most',
    '',
    'The largest steps over all samples: the token t that arrived, the new pair (z_{t−Δ}, z_t), the principal angles θ1 ≤ θ2 and the step.',
    '',
  );
  out.push(
    markdownTable({
      columns: ['layer', 'Δ', 'token', 'pair (t−Δ, t)', 'sample:t', 'θ1 (°)', 'θ2 (°)', 'step (°)'],
      rows: rows.flatMap(({ l, g }) =>
        g.largestSteps.map((s) => [
          l.layer,
          g.delta,
          s.token,
          `${s.pair[0]}${g.delta === 1 ? ' ' : ' ⋯ '}${s.pair[1]}`,
          `${s.sample}:${s.position}`,
          round(s.theta1Deg, 2),
          round(s.theta2Deg, 2),
          round(s.stepDeg, 2),
        ]),
      ),
    }),
    '',
  );
  const many = rows.length > 8;
  out.push('## Pair geometry', '');
  out.push(
    await writeChart(dir, 'angles', {
      kind: 'histogram',
      chart: {
        title: 'Angle between z_{t−Δ} and z_t',
        xLabel: 'angle (degrees)',
        bins: 36,
        domain: [0, 180],
        height: many ? 50 : 90,
        series: rows.map(({ l, g }) => ({
          name: layerLabel(l, g.delta),
          values: g.angleDeg.flat().filter((v): v is number => v !== null),
        })),
      },
    }),
    '',
    await writeChart(dir, 'areas', {
      kind: 'histogram',
      chart: {
        title: 'Parallelogram area ‖z_{t−Δ} ∧ z_t‖ before normalisation',
        xLabel: 'log10 ‖p‖',
        bins: 40,
        height: many ? 50 : 90,
        series: rows.map(({ l, g }) => ({
          name: layerLabel(l, g.delta),
          values: g.area
            .flat()
            .filter((v): v is number => v !== null && v > 0)
            .map(Math.log10),
        })),
      },
    }),
    '',
  );
  const worst = Math.max(...layers.map((l) => l.check.maxAbsDiff));
  out.push(
    `Check: the model's own \`grassmannMixing\` (traced, float32) gives Plücker coordinates p̂ that match grassmann-math's \`plucker\` of the same z (float64) within ${worst.toExponential(2)} (max abs).`,
    '',
  );
  return out;
}

async function attentionSections(
  dir: string,
  layers: readonly AttentionLayerReport[],
  tokens: readonly string[],
): Promise<string[]> {
  const kind = layers[0]?.kind ?? 'dpa';
  const out: string[] = [];
  out.push(
    '## Attention entropy per head and layer',
    '',
    'Entropy of each query row in nats (0: one key; ln(i + 1): uniform over the causal window), its normalised form H/ln(i + 1) over rows i ≥ 1, ' +
      `and the share of attention weight on antiparallel pairs (q·k < 0) next to the share of such pairs. ${kind === 'ea' ? 'Expressive attention weighs s²/(1 + s²): antiparallel pairs attend as much as parallel ones.' : 'Softmax attention gives antiparallel pairs small weights.'}`,
    '',
    markdownTable({
      columns: [
        'layer',
        'head',
        'entropy mean',
        'entropy 5–95%',
        'normalised entropy',
        'weight on q·k < 0',
        'pairs with q·k < 0',
      ],
      rows: layers.flatMap((l) =>
        l.heads.map((h) => [
          l.layer,
          h.head,
          round(h.entropy.mean),
          `${fix(h.entropy.p05)}–${fix(h.entropy.p95)}`,
          round(h.normalizedEntropy.mean),
          round(h.antiparallelWeight),
          round(h.antiparallelPairs),
        ]),
      ),
    }),
    '',
  );
  const heads = layers[0]?.heads.length ?? 0;
  out.push(
    await writeChart(dir, 'entropy-heads', {
      kind: 'heatmap',
      chart: {
        title: 'Mean normalised attention entropy',
        xLabel: 'head',
        yLabel: 'layer',
        xLabels: Array.from({ length: heads }, (_, h) => `head ${h}`),
        yLabels: layers.map((l) => `layer ${l.layer}`),
        values: layers.map((l) => l.heads.map((h) => h.normalizedEntropy.mean)),
        colorLabel: 'H / ln(i+1)',
        domain: [0, 1],
        cell: 40,
      },
    }),
    '',
    await writeChart(dir, 'entropy', {
      kind: 'heatmap',
      chart: {
        title: 'Normalised attention entropy of each query, mean over heads (1: uniform over the causal window)',
        xLabel: 'token (sample 0)',
        yLabel: 'layer',
        xLabels: tokens,
        yLabels: layers.map((l) => `layer ${l.layer}`),
        values: layers.map((l) => l.perPositionNormalizedEntropy[0] ?? []),
        colorLabel: 'H / ln(i+1)',
        domain: [0, 1],
      },
    }),
    '',
  );
  const worst = Math.max(...layers.map((l) => l.check.maxAbsDiff));
  out.push(
    `Check: the model's own \`causalAttention\` (traced) puts at most ${worst.toExponential(2)} of weight on a future key (causality: 0).`,
    '',
  );
  return out;
}

/**
 * Write inspect.json (every number) and report.md with its charts (SVG + PNG) into `dir`; returns the report's path.
 */
export async function writeInspectReport(dir: string, result: InspectResult, meta: InspectReportMeta): Promise<string> {
  await writeJsonAtomic(join(dir, 'inspect.json'), {
    ...result,
    command: meta.command,
    checkpoint: meta.checkpoint,
    input: meta.input,
  });
  const m = result.model;
  const tokens = result.samples[0]?.tokens ?? [];
  const parts: string[] = [
    `# Inside ${m.kind === 'grassmann' ? 'a Grassmann' : `a Transformer (${m.attention.toUpperCase()})`} language model`,
    '',
    `Command: \`${meta.command}\``,
    '',
    `Checkpoint: \`${meta.checkpoint}\`. Model: ${m.kind}${m.kind === 'grassmann' ? ` (r ${m.r}, offsets ${JSON.stringify(m.offsets)})` : ` (${m.attention}, ${m.nHeads} heads)`}, ` +
      `${m.nLayers} layers, d ${m.dModel}, L ${m.maxLen}, ${m.norm}-LN.`,
    '',
    `Input: ${meta.input}. Per-position pictures show sample 0 (${tokens.length} tokens); distributions and tables use every sample. Every number is in inspect.json.`,
    '',
  ];
  if (result.grassmann !== undefined) parts.push(...(await grassmannSections(dir, result.grassmann, tokens)));
  if (result.attention !== undefined) parts.push(...(await attentionSections(dir, result.attention, tokens)));
  const path = join(dir, 'report.md');
  await writeFileAtomic(path, new TextEncoder().encode(parts.join('\n')));
  return path;
}
