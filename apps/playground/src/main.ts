// The playground page: a backend, a checkpoint (folder picker or URL), a prompt, streaming generation with the
// constant-memory decoder, and the geometry of the text as `grassflow-lm inspect` computes it.
//
// Query parameters (all optional): checkpoint=URL, vocab=URL, wordVocab=URL, prompt, maxTokens, temperature, topK, seed,
// backend=webgpu|wasm|cpu, autorun=1 (load and generate at once). State for tests is kept in data-* attributes.
import {
  appSlideKeep,
  checkpointBytesFromFiles,
  fetchCheckpointBytes,
  initBackend,
  isPretrainedExtra,
  loadCheckpointFromBytes,
  readPretrainedTokenizer,
  sampleIds,
  type BrowserBackendInfo,
  type BrowserBackendName,
  type CheckpointBytes,
  type LoadedCheckpointBytes,
} from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/prng';
import {
  continuationText,
  PureWordLevelTokenizer,
  PureWordPieceTokenizer,
  wikitextForWordPiece,
  wordPieceLines,
} from '@grassflow/tokenizers';
import { drawHeatmap, drawLines } from './draw.js';
import { sequenceGeometry, type GeometryView } from './geometry.js';

const params = new URLSearchParams(location.search);

function el<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e as T;
}

const ui = {
  backend: el<HTMLParagraphElement>('backend'),
  folder: el<HTMLInputElement>('folder'),
  url: el<HTMLInputElement>('url'),
  loadUrl: el<HTMLButtonElement>('load-url'),
  vocabFile: el<HTMLInputElement>('vocab-file'),
  wordVocabFile: el<HTMLInputElement>('word-vocab-file'),
  model: el<HTMLParagraphElement>('model'),
  prompt: el<HTMLTextAreaElement>('prompt'),
  maxTokens: el<HTMLInputElement>('max-tokens'),
  temperature: el<HTMLInputElement>('temperature'),
  topK: el<HTMLInputElement>('top-k'),
  seed: el<HTMLInputElement>('seed'),
  run: el<HTMLButtonElement>('run'),
  output: el<HTMLPreElement>('output'),
  speed: el<HTMLParagraphElement>('speed'),
  geometryNote: el<HTMLParagraphElement>('geometry-note'),
  charts: el<HTMLDivElement>('charts'),
};

for (const [name, input] of [
  ['prompt', ui.prompt],
  ['maxTokens', ui.maxTokens],
  ['temperature', ui.temperature],
  ['topK', ui.topK],
  ['seed', ui.seed],
] as const) {
  const v = params.get(name);
  if (v !== null) input.value = v;
}

/** Shows an error where it happened and in the console; the page stays usable. */
function fail(where: HTMLElement, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  where.textContent = message;
  where.dataset['state'] = 'error';
  console.error(message);
}

/** A checkpoint's tokenizer as `grassflow-lm generate` uses it: prompt → ids, ids → text. */
interface PageTokenizer {
  encodePrompt(text: string): Int32Array;
  decode(ids: Int32Array): string;
  idToToken(id: number): string | undefined;
}

interface Session {
  loaded: LoadedCheckpointBytes;
  tok: PageTokenizer;
}

/** Where a checkpoint came from: a URL (its folder's URL) or picked files. */
type Origin = { url: string } | { files: readonly File[] };

/** The file `grassflow-lm train --tokenizer word` writes in a run folder (next to its config.json). */
const WORD_VOCAB_FILE = 'word-vocab.json';

const backend: Promise<BrowserBackendInfo> = startBackend();
let session: Session | undefined;
let vocabText: Promise<string> | undefined;

function startBackend(): Promise<BrowserBackendInfo> {
  const forced = params.get('backend');
  return initBackend({
    ...(forced === null ? {} : { backend: forced as BrowserBackendName }),
    wasmPaths: new URL('wasm/', document.baseURI).href,
    loadWebgpu: () => import('@tensorflow/tfjs-backend-webgpu'),
  }).then((info) => {
    ui.backend.textContent = `Backend: ${info.reason}`;
    ui.backend.dataset['state'] = 'ready';
    ui.backend.dataset['backend'] = info.name;
    if (info.threads !== undefined) ui.backend.dataset['threads'] = String(info.threads);
    return info;
  });
}

/** vocab.txt: a picked file, else the URL of ?vocab=, else the copy the build put beside the page. */
async function vocabulary(): Promise<string> {
  const picked = ui.vocabFile.files?.[0];
  if (picked !== undefined) return picked.text();
  vocabText ??= (async () => {
    const url = new URL(params.get('vocab') ?? 'vocab/bert-base-uncased-vocab.txt', document.baseURI).href;
    const res = await fetch(url);
    if (!res.ok)
      throw new Error(
        `the WordPiece vocabulary is not at ${url} (HTTP ${res.status}): pick the vocab.txt of BERT uncased ` +
          '(the one grassflow-lm trained with, bert-vocab/vocab.txt of the data folder)',
      );
    return res.text();
  })();
  return vocabText;
}

/**
 * A word-level run's vocabulary, as text, and where it came from: the picked word-vocab.json, else ?wordVocab=, else
 * the run folder's word-vocab.json (among the picked files, or beside the URL's checkpoints/ folder).
 */
async function wordVocabulary(origin: Origin, source: string): Promise<{ text: string; from: string }> {
  const picked = ui.wordVocabFile.files?.[0];
  if (picked !== undefined) return { text: await picked.text(), from: picked.name };
  const missing = (where: string): Error =>
    new Error(
      `this checkpoint was trained with the word-level tokenizer and ${where} has no ${WORD_VOCAB_FILE} ` +
        `(grassflow-lm train writes it in word-level run folders; older ones lack it): pick the run's ` +
        `${WORD_VOCAB_FILE}, or write it from the data folder the run trained on — see the playground README`,
    );
  if ('files' in origin) {
    // the shallowest word-vocab.json among the picked files: the run folder's
    const found = origin.files
      .filter((f) => f.name === WORD_VOCAB_FILE)
      .sort((a, b) => a.webkitRelativePath.split('/').length - b.webkitRelativePath.split('/').length)[0];
    if (found === undefined) throw missing('the picked folder');
    return { text: await found.text(), from: found.webkitRelativePath || found.name };
  }
  const given = params.get('wordVocab');
  // A checkpoint under a run folder's checkpoints/ has the vocabulary two folders up; one fetch, no 404s to guess.
  const folder = source.replace(/\/+$/, '');
  const runFolder = /\/checkpoints\/(best|latest)$/.test(folder) ? folder.replace(/\/checkpoints\/[^/]+$/, '') : folder;
  const url = new URL(given ?? `${runFolder}/${WORD_VOCAB_FILE}`, document.baseURI).href;
  const res = await fetch(url);
  if (!res.ok) throw missing(`the run folder (${url}: HTTP ${res.status})`);
  return { text: await res.text(), from: url };
}

/**
 * A file of the checkpoint's own folder (`source`: the folder's URL, or its path among the picked files), for an
 * export's tokenizer files.
 */
async function folderFile(origin: Origin, source: string, name: string): Promise<Uint8Array> {
  if ('files' in origin) {
    const path = source === '.' ? name : `${source}/${name}`;
    const found = origin.files.find((f) => (f.webkitRelativePath || f.name) === path);
    if (found === undefined) throw new Error(`the picked folder has no ${path}: pick the whole export folder`);
    return new Uint8Array(await found.arrayBuffer());
  }
  const url = new URL(name, `${source.replace(/\/+$/, '')}/`).href;
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}; serve the whole export folder`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The tokenizer the checkpoint was trained with: an export's own (tokenizer_config.json and the files it names,
 * each checked against config.json's records), else the one grassflow-lm records in config.json's extra.run.
 */
async function tokenizerFor(loaded: LoadedCheckpointBytes, origin: Origin): Promise<PageTokenizer> {
  if (isPretrainedExtra(loaded.extra)) {
    ui.model.dataset['tokenizer'] = 'export';
    const tok = await readPretrainedTokenizer(loaded.extra, (n) => folderFile(origin, loaded.source, n), loaded.source);
    if (tok.vocabSize !== loaded.config.vocabSize)
      throw new Error(
        `${loaded.source}: its tokenizer has ${tok.vocabSize} tokens, the model ${loaded.config.vocabSize}`,
      );
    return tok;
  }
  ui.model.dataset['tokenizer'] = 'run';
  const run = loaded.extra['run'] as { tokenizer?: string; tokenizerId?: string } | undefined;
  const kind = run?.tokenizer ?? 'wordpiece';
  const V = loaded.config.vocabSize;
  if (kind === 'word') {
    const { text, from } = await wordVocabulary(origin, loaded.source);
    const tok = await PureWordLevelTokenizer.fromVocabFileText(text, from);
    if (run?.tokenizerId !== undefined && tok.id !== run.tokenizerId)
      throw new Error(
        `${from} is the vocabulary ${tok.id}, but the checkpoint was trained with ${run.tokenizerId}: ` +
          `pick the ${WORD_VOCAB_FILE} of its run folder`,
      );
    if (tok.vocabSize !== V)
      throw new Error(`${from} has ${tok.vocabSize} words but the model has vocabSize ${V}: pick the run's vocabulary`);
    // As grassflow-lm generate: the prompt's words as one line without its <eos>; text in the .tokens convention.
    return tok;
  }
  if (kind !== 'wordpiece') {
    throw new Error(
      `this checkpoint was trained with the '${kind}' tokenizer; the playground reads WordPiece and word-level ` +
        'checkpoints (grassflow-lm train --tokenizer wordpiece|word)',
    );
  }
  const tok = PureWordPieceTokenizer.fromVocabText(await vocabulary());
  if (tok.vocabSize !== V) {
    throw new Error(
      `the vocabulary has ${tok.vocabSize} tokens but the model has vocabSize ${V}: ` +
        'pick the vocab.txt the model was trained with',
    );
  }
  // As grassflow-lm generate: the prompt as WikiText for WordPiece, no special tokens; [SEP] ends a line.
  return {
    encodePrompt: (text) => tok.encode(wikitextForWordPiece(text), { addSpecialTokens: false }).ids,
    decode: (ids) => wordPieceLines(tok.decode(ids, { skipSpecialTokens: false })),
    idToToken: (id) => tok.idToToken(id),
  };
}

/** The last checkpoint opened, to open again when a vocabulary is picked after it failed for want of one. */
let reopen: (() => void) | undefined;

async function open(bytes: Promise<CheckpointBytes>, origin: Origin): Promise<void> {
  reopen = () => void open(bytes, origin);
  ui.model.dataset['state'] = 'loading';
  ui.model.textContent = 'Loading the checkpoint…';
  ui.run.disabled = true;
  try {
    await backend;
    const loaded = await loadCheckpointFromBytes(await bytes);
    let tok: PageTokenizer;
    try {
      tok = await tokenizerFor(loaded, origin);
    } catch (err) {
      loaded.model.dispose();
      throw err;
    }
    session?.loaded.model.dispose();
    for (const t of session?.loaded.extraTensors.values() ?? []) t.dispose();
    session = { loaded, tok };
    const c = loaded.config;
    const mixer =
      c.kind === 'grassmann' ? `Grassmann r=${c.r}, offsets ${c.offsets.join(',')}` : `Transformer ${c.attention}`;
    ui.model.textContent =
      `${loaded.source}: ${mixer}, ${c.nLayers} layers of d ${c.dModel}, maxLen ${c.maxLen}, ` +
      `vocabulary ${c.vocabSize}${typeof loaded.extra['step'] === 'number' ? `, step ${loaded.extra['step']}` : ''}`;
    ui.model.dataset['state'] = 'ready';
    ui.run.disabled = false;
  } catch (err) {
    fail(ui.model, err);
  }
}

function numberOf(input: HTMLInputElement, what: string, integer: boolean): number {
  const v = Number(input.value);
  if (!Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v)))
    throw new RangeError(`${what} must be a ${integer ? 'whole ' : ''}number >= 0, got '${input.value}'`);
  return v;
}

async function generate(): Promise<void> {
  if (session === undefined) return;
  const { loaded, tok } = session;
  ui.run.disabled = true;
  ui.output.dataset['state'] = 'running';
  try {
    const maxTokens = numberOf(ui.maxTokens, 'tokens', true);
    const sampling = {
      maxTokens,
      temperature: numberOf(ui.temperature, 'temperature', false),
      topK: numberOf(ui.topK, 'top-k', true),
      slideKeep: appSlideKeep(loaded.model.config.maxLen), // as grassflow-lm generate's default
    };
    const seed = numberOf(ui.seed, 'seed', true);
    // As grassflow-lm generate: the prompt's ids (see tokenizerFor), then the seed's Prng stream.
    const prompt = tok.encodePrompt(ui.prompt.value);
    if (prompt.length === 0) throw new RangeError('the prompt encodes to no tokens: type some text');
    ui.output.dataset['promptIds'] = Array.from(prompt).join(',');
    const promptText = tok.decode(prompt);
    const out: number[] = [];
    const show = (): void => {
      const text = continuationText(tok, prompt, out); // as grassflow-lm generate prints it
      ui.output.replaceChildren();
      const head = document.createElement('span');
      head.className = 'prompt';
      head.textContent = text.startsWith(promptText) ? promptText : '';
      ui.output.append(head, text.slice(head.textContent.length));
    };
    show();
    const info = await backend;
    const start = performance.now();
    for await (const id of sampleIds(loaded.model, prompt, sampling, new Prng(seed))) {
      out.push(id);
      show();
      const seconds = (performance.now() - start) / 1000;
      ui.speed.textContent = `${out.length} tokens in ${seconds.toFixed(2)} s: ${(out.length / seconds).toFixed(1)} tokens/s on ${info.name}`;
    }
    ui.output.dataset['ids'] = out.join(',');
    ui.output.dataset['text'] = continuationText(tok, prompt, out);
    ui.output.dataset['state'] = 'done';
    const all = Int32Array.from([...prompt, ...out]).slice(-loaded.config.maxLen);
    await showGeometry(
      await sequenceGeometry(loaded.model, all),
      Array.from(all, (i) => tok.idToToken(i) ?? '?'),
    );
  } catch (err) {
    fail(ui.output, err);
  } finally {
    ui.run.disabled = false;
  }
}

function canvas(): HTMLCanvasElement {
  const c = document.createElement('canvas');
  ui.charts.append(c);
  return c;
}

async function showGeometry(view: GeometryView, tokens: string[]): Promise<void> {
  ui.charts.replaceChildren();
  if (view.kind === 'grassmann') {
    ui.geometryNote.textContent =
      'Gate α (mean over channels; 1 keeps the token state, 0 takes the geometric path), the angle of each Plücker ' +
      'pair (z_{t−Δ}, z_t), and the principal-angle step of the pair-plane on Gr(2, r) from t−1 to t, per layer.';
    // Colours over the range α takes here (it is in (0, 1); trained gates often stay within a few tenths).
    const alphas = view.layers.flatMap((l) => l.alpha);
    const lo = Math.floor(Math.min(...alphas) * 100) / 100;
    const hi = Math.max(lo + 0.01, Math.ceil(Math.max(...alphas) * 100) / 100);
    drawHeatmap(canvas(), {
      title: 'α by layer and position',
      values: view.layers.map((l) => l.alpha),
      rowLabels: view.layers.map((l) => `layer ${l.layer}`),
      tokens,
      domain: [lo, hi],
    });
    for (const l of view.layers) {
      drawLines(canvas(), {
        title: `layer ${l.layer}: Plücker pair angle ∠(z_{t−Δ}, z_t)`,
        series: l.offsets.map((o) => ({ label: `Δ=${o.delta}`, values: o.angleDeg })),
        tokens,
        domain: [0, 180],
        unit: '°',
      });
      drawLines(canvas(), {
        title: `layer ${l.layer}: principal-angle flow, geodesic step P_{t−1} → P_t`,
        series: l.offsets.map((o) => ({ label: `Δ=${o.delta}`, values: o.stepDeg })),
        tokens,
        domain: [0, 130],
        unit: '°',
      });
    }
  } else {
    ui.geometryNote.textContent = 'Attention weights a_ij of each head (query i down, key j across), per layer.';
    const L = view.length;
    for (const l of view.layers) {
      l.heads.forEach((a, h) => {
        drawHeatmap(canvas(), {
          title: `layer ${l.layer}, head ${h}: attention`,
          values: Array.from({ length: L }, (_, i) =>
            Array.from({ length: L }, (_, j) => (j > i ? null : a[i * L + j]!)),
          ),
          rowLabels: tokens,
          tokens,
          domain: [0, 1],
        });
      });
    }
  }
  ui.charts.dataset['state'] = 'drawn';
  ui.charts.dataset['layers'] = String(view.layers.length);
  await new Promise((done) => requestAnimationFrame(done));
}

ui.folder.addEventListener('change', () => {
  const files = ui.folder.files;
  if (files !== null && files.length > 0) void open(checkpointBytesFromFiles(files), { files: Array.from(files) });
});
const openUrl = (url: string): Promise<void> => open(fetchCheckpointBytes(url), { url });
ui.loadUrl.addEventListener('click', () => {
  if (ui.url.value.trim() !== '') void openUrl(new URL(ui.url.value.trim(), document.baseURI).href);
});
for (const input of [ui.vocabFile, ui.wordVocabFile]) {
  input.addEventListener('change', () => {
    vocabText = undefined;
    if (ui.model.dataset['state'] === 'error') reopen?.();
  });
}
ui.run.addEventListener('click', () => void generate());

backend.catch((err: unknown) => fail(ui.backend, err));
const fromUrl = params.get('checkpoint');
if (fromUrl !== null) {
  ui.url.value = fromUrl;
  const opened = openUrl(new URL(fromUrl, document.baseURI).href);
  if (params.get('autorun') === '1') void opened.then(() => generate());
}
