// README.md of an export folder: the model card, from what the run recorded (config.json, the checkpoint's trainer
// state, metrics.jsonl). Numbers the run did not record are said to be missing, with the command that measures them.
import type { ModelConfig } from '@grassflow/gpu-layers';

/** What the card reads from a run (all optional: a run of an older version may lack some). */
export interface CardInput {
  /** The folder name given on the command line, for the card's title line. */
  runName: string;
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

/** The model card (Markdown). */
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
  const lines = [
    `# ${c.model.kind === 'transformer' ? 'Transformer' : 'Grassmann'} LM on WikiText-2 (${run.preset ?? 'custom'})`,
    '',
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
    'grassflow-lm generate --checkpoint THIS_FOLDER --prompt "the history of" --seed 1',
    '```',
    '',
    'Files: `config.json` (the model config under `model`, file sizes and SHA-256s), `model.safetensors`',
    '(the weights, PyTorch names and layout), `tokenizer_config.json` and `vocab.txt` (the tokenizer), this card.',
    'No optimizer state.',
    '',
  ];
  return lines.join('\n');
}
