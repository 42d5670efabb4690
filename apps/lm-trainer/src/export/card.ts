// README.md of an export folder: the model card, from what the run recorded (config.json, the checkpoint's trainer
// state, metrics.jsonl). Numbers the run did not record are said to be missing, with the command that measures them.
import type { ModelConfig } from '@grassflow/gpu-layers';
import type { BaselineResult } from '../baselines/ngram.js';
import { referenceBaselines, standingAgainst } from '../baselines/standing.js';

/** What the card reads from a run (all optional: a run of an older version may lack some). */
export interface CardInput {
  /** The folder name given on the command line, for the card's provenance line. */
  runName: string;
  /** The model's name (`export --name`: e.g. the npm package it is published as), for the title and the library use. */
  name?: string | undefined;
  /** The run's config.json (format grassflow-lm-run). */
  run: {
    command?: string;
    preset?: string;
    params?: number;
    totalSteps?: number;
    git?: string | null;
    created?: string;
    training?: { batch?: number; seqLen?: number; block?: number; seed?: number };
    data?: {
      tokenizer?: string;
      tokenizerId?: string;
      trainTokens?: number;
      validTokens?: number;
      evalTokens?: number;
    };
  };
  model: ModelConfig;
  /** Parameters counted on the loaded model (the run's `params` when it recorded them). */
  params: number;
  /** The exported checkpoint's step, tokens seen and best validation PPL (extra.trainer). */
  step: number | undefined;
  tokensSeen: number | undefined;
  bestValPpl: { value: number; step: number } | undefined;
  /**
   * The `heldout` record of metrics.jsonl (the exported checkpoint's, else the last), if the run was scored on
   * wiki.test (by `by`, on `tokens` tokens: the first ones, or every target of the split when `wholeSplit`), with the
   * validation PPL scored beside it.
   */
  testPpl:
    | {
        value: number;
        step: number | undefined;
        tokens?: number | undefined;
        by?: string | undefined;
        wholeSplit?: boolean | undefined;
        valid?: { value: number; tokens: number } | undefined;
      }
    | undefined;
  /**
   * The n-gram baselines (fitted on wiki.train, scored on every target of wiki.test with the run's tokenizer), or why
   * there are none.
   */
  baselines: { results: readonly BaselineResult[] } | { missing: string };
  /** Which checkpoint of the run was exported (`checkpoints/best` or `checkpoints/latest`). */
  checkpoint: string;
  exportedAt: string;
}

const n = (v: number): string => v.toLocaleString('en-US');

function architecture(m: ModelConfig): string {
  const mixing =
    m.kind === 'transformer'
      ? `causal attention (${m.attention})`
      : `causal Grassmann mixing (r ${m.r}, offsets ${JSON.stringify(m.offsets)})`;
  return (
    `${m.kind === 'transformer' ? 'Transformer' : 'Grassmann'} language model: ${mixing}, ${m.nLayers} layers, ` +
    `d_model ${m.dModel}, d_ff ${m.dFF}, maxLen ${m.maxLen}, vocabulary ${n(m.vocabSize)}, ${m.norm}-LN, ` +
    `dropout ${m.dropout} (training only), tied input/output embedding.`
  );
}

/** The Hugging Face Hub's id of WikiText, and the configuration of the `.tokens` files grassflow-lm reads. */
const HUB_DATASET = { id: 'Salesforce/wikitext', config: 'wikitext-2-v1', name: 'WikiText-2' } as const;

type Yaml = string | number | boolean | readonly Yaml[] | { readonly [key: string]: Yaml };

/** Block-style YAML; every scalar JSON-quoted (JSON strings and numbers are YAML scalars), so nothing needs escaping. */
function yaml(value: Yaml, indent = ''): string {
  if (typeof value !== 'object') return JSON.stringify(value);
  const lines = Array.isArray(value)
    ? value.map((v: Yaml) => `${indent}- ${typeof v === 'object' ? yaml(v, `${indent}  `).trimStart() : yaml(v)}`)
    : Object.entries(value).map(([k, v]) =>
        typeof v === 'object' ? `${indent}${k}:\n${yaml(v, `${indent}  `)}` : `${indent}${k}: ${yaml(v)}`,
      );
  return lines.join('\n');
}

/**
 * The card's YAML front matter, as the Hugging Face Hub reads it: library, license, data set, the metric, and the
 * model-index results: the perplexities the run recorded (never one it did not) and the n-gram baselines' on wiki.test.
 */
function frontMatter(c: CardInput): string {
  const dataset = (split: string) => ({
    type: HUB_DATASET.id,
    name: HUB_DATASET.name,
    config: HUB_DATASET.config,
    split,
  });
  const ppl = (value: number, name: string) => ({ type: 'perplexity', value: Number(value.toFixed(2)), name });
  const results: Yaml[] = [];
  const task = { type: 'text-generation', name: 'Language modeling' };
  const t = c.testPpl;
  const test: Yaml[] = [
    ...(t === undefined
      ? []
      : [
          ppl(
            t.value,
            `Test perplexity (${[
              t.step === undefined ? 'step unknown' : `step ${t.step}`,
              t.tokens === undefined
                ? undefined
                : t.wholeSplit === true
                  ? 'all of wiki.test'
                  : `first ${t.tokens} tokens`,
            ]
              .filter((x) => x !== undefined)
              .join(', ')})`,
          ),
        ]),
    ...('results' in c.baselines
      ? referenceBaselines(c.baselines.results).map((r) => ppl(r.ppl, `${r.name} baseline, all of wiki.test`))
      : []),
  ];
  if (test.length > 0) results.push({ task, dataset: dataset('test'), metrics: test });
  if (c.bestValPpl !== undefined) {
    const valid = ppl(c.bestValPpl.value, `Validation perplexity (best evaluation, step ${c.bestValPpl.step})`);
    results.push({ task, dataset: dataset('validation'), metrics: [valid] });
  }
  const meta: { [key: string]: Yaml } = {
    library_name: 'grassflow',
    license: 'mit',
    language: ['en'],
    pipeline_tag: 'text-generation',
    tags: ['grassflow', c.model.kind, 'causal-lm'],
    datasets: [HUB_DATASET.id],
    metrics: ['perplexity'],
    ...(results.length === 0 ? {} : { 'model-index': [{ name: c.name ?? c.runName, results }] }),
  };
  return `---\n${yaml(meta)}\n---\n`;
}

/** The card's line on the n-gram baselines, and where the model stands against them when its test PPL is known. */
function baselinesLine(c: CardInput): string {
  if ('missing' in c.baselines) return `- n-gram baselines on wiki.test: not computed (${c.baselines.missing}).`;
  const refs = referenceBaselines(c.baselines.results);
  const rows = refs.map((r) => `${r.name} ${r.ppl.toFixed(2)}`).join(', ');
  const standing =
    c.testPpl === undefined ? '' : `; this model's test perplexity is ${standingAgainst(c.testPpl.value, refs)}`;
  return `- n-gram baselines on all of wiki.test (fitted on wiki.train, same tokenizer): ${rows}${standing}.`;
}

/** The model card (Markdown): YAML front matter for the Hub, then the card. */
export function modelCard(c: CardInput): string {
  const { run } = c;
  const data = run.data ?? {};
  const seqLen = run.training?.seqLen ?? run.training?.block;
  const batch = run.training?.batch;
  const shape = batch === undefined || seqLen === undefined ? '' : ` (${batch}×${seqLen} tokens)`;
  const val =
    c.bestValPpl === undefined
      ? 'not measured (the run recorded no evaluation)'
      : `${c.bestValPpl.value.toFixed(2)} (best evaluation, step ${c.bestValPpl.step}` +
        `${data.evalTokens === undefined ? '' : `, first ${n(data.evalTokens)} tokens of wiki.valid`})`;
  const t = c.testPpl;
  // Never a number the run did not record; one measured on another checkpoint of the run says so.
  const other = t?.step !== undefined && c.step !== undefined && t.step !== c.step;
  const test =
    t === undefined
      ? 'not measured (measure it: `grassflow-lm eval --checkpoint THIS_FOLDER --split test`)'
      : `${t.value.toFixed(2)} (` +
        [
          t.step === undefined ? undefined : `step ${t.step}${other ? ', not the exported checkpoint' : ''}`,
          t.tokens === undefined
            ? undefined
            : t.wholeSplit === true
              ? `all ${n(t.tokens)} targets of wiki.test`
              : `first ${n(t.tokens)} tokens of wiki.test`,
          t.by === undefined ? undefined : `scored by \`${t.by}\``,
        ]
          .filter((x) => x !== undefined)
          .join(', ') +
        ')';
  const kind = c.model.kind === 'transformer' ? 'Transformer' : 'Grassmann';
  const lines = [
    frontMatter(c),
    `# ${c.name ?? `${kind} LM on WikiText-2`}`,
    '',
    ...(c.name === undefined ? [] : [`A ${kind} language model trained on WikiText-2.`, '']),
    `Exported by \`grassflow-lm export\` from the run \`${c.runName}\` (${c.checkpoint}) on ${c.exportedAt}.`,
    '',
    '## Model',
    '',
    `- ${architecture(c.model)}`,
    `- Parameters: ${n(c.params)}.`,
    '',
    '## Data and training',
    '',
    `- Data: WikiText-2 (wiki.train.tokens${data.trainTokens === undefined ? '' : `, ${n(data.trainTokens)} tokens`}).`,
    `- Tokenizer: ${data.tokenizer ?? 'unknown'}${data.tokenizerId === undefined ? '' : ` (\`${data.tokenizerId}\`)`}.`,
    `- Steps: ${c.step ?? 'unknown'}${run.totalSteps === undefined ? '' : ` of ${run.totalSteps}`}${shape}` +
      `; tokens seen: ${c.tokensSeen === undefined ? 'unknown' : n(c.tokensSeen)}.`,
    '',
    '## Results',
    '',
    `- Validation perplexity: ${val}.`,
    ...(t?.wholeSplit === true && t.valid !== undefined
      ? [
          `- Validation perplexity, all ${n(t.valid.tokens)} targets of wiki.valid: ${t.valid.value.toFixed(2)} ` +
            `(step ${t.step ?? 'unknown'}${other ? ', not the exported checkpoint' : ''}).`,
        ]
      : []),
    `- Test perplexity: ${test}.`,
    baselinesLine(c),
    '',
    '## How it was made',
    '',
    '```sh',
    run.command ?? '(the run recorded no command)',
    '```',
    '',
    `Code commit ${run.git ?? 'unknown'}; run created ${run.created ?? 'unknown'}; seed ${run.training?.seed ?? 'unknown'}.`,
    '',
    '## Use',
    '',
    '```sh',
    `grassflow-lm generate --checkpoint ${c.name === undefined ? 'THIS_FOLDER' : `node_modules/${c.name}`} ` +
      '--prompt "the history of" --seed 1',
    '```',
    '',
    'From JavaScript or TypeScript, with `@grassflow/gpu-layers`:',
    '',
    '```ts',
    "import { fromPretrained } from '@grassflow/gpu-layers';",
    '',
    `const lm = await fromPretrained(${JSON.stringify(c.name ?? 'THIS_FOLDER')}); // a folder, an installed package, a URL`,
    "console.log(await lm.generate('the history of', { maxTokens: 20, seed: 1 }));",
    'lm.dispose();',
    '```',
    '',
    'Files: `config.json` (the model config under `model`, file sizes and SHA-256s, and `model_type`/`architectures`),',
    '`model.safetensors` (the weights, PyTorch names and layout), `tokenizer.json` (the tokenizer in the format of',
    "Hugging Face's `tokenizers`; prepare text as `tokenizer_config.json`'s `preparation` says), `tokenizer_config.json`",
    'and `vocab.txt`, this card.',
    'No optimizer state.',
    '',
  ];
  return lines.join('\n');
}
