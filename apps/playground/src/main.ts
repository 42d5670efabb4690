// The playground page: a backend, a checkpoint (folder picker or URL), a prompt, streaming generation with the
// constant-memory decoder, and the geometry of the text as `grassflow-lm inspect` computes it.
//
// Query parameters (all optional): checkpoint=URL, vocab=URL, prompt, maxTokens, temperature, topK, seed,
// backend=webgpu|wasm|cpu, autorun=1 (load and generate at once). State for tests is kept in data-* attributes.
import {
  checkpointBytesFromFiles,
  fetchCheckpointBytes,
  initBackend,
  loadCheckpointFromBytes,
  sampleIds,
  type BrowserBackendInfo,
  type BrowserBackendName,
  type CheckpointBytes,
  type LoadedCheckpointBytes,
} from '@grassflow/gpu-layers';
import { Prng } from '@grassflow/datasets/prng';
import { PureWordPieceTokenizer, wikitextForWordPiece, wordPieceLines } from '@grassflow/tokenizers';
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

interface Session {
  loaded: LoadedCheckpointBytes;
  tok: PureWordPieceTokenizer;
}

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

/** The tokenizer the checkpoint was trained with (grassflow-lm records it in config.json's extra.run). */
async function tokenizerFor(loaded: LoadedCheckpointBytes): Promise<PureWordPieceTokenizer> {
  const run = loaded.extra['run'] as { tokenizer?: string; tokenizerId?: string } | undefined;
  const kind = run?.tokenizer ?? 'wordpiece';
  if (kind !== 'wordpiece') {
    throw new Error(
      `this checkpoint was trained with the '${kind}' tokenizer; the playground reads WordPiece checkpoints ` +
        '(grassflow-lm train --tokenizer wordpiece, the default)',
    );
  }
  const tok = PureWordPieceTokenizer.fromVocabText(await vocabulary());
  if (tok.vocabSize !== loaded.config.vocabSize) {
    throw new Error(
      `the vocabulary has ${tok.vocabSize} tokens but the model has vocabSize ${loaded.config.vocabSize}: ` +
        'pick the vocab.txt the model was trained with',
    );
  }
  return tok;
}

async function open(bytes: Promise<CheckpointBytes>): Promise<void> {
  ui.model.dataset['state'] = 'loading';
  ui.model.textContent = 'Loading the checkpoint…';
  ui.run.disabled = true;
  try {
    await backend;
    const loaded = await loadCheckpointFromBytes(await bytes);
    let tok: PureWordPieceTokenizer;
    try {
      tok = await tokenizerFor(loaded);
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
    };
    const seed = numberOf(ui.seed, 'seed', true);
    // As grassflow-lm generate: the prompt as WikiText for WordPiece, no special tokens; the seed's Prng stream.
    const prompt = tok.encode(wikitextForWordPiece(ui.prompt.value), { addSpecialTokens: false }).ids;
    if (prompt.length === 0) throw new RangeError('the prompt encodes to no tokens: type some text');
    ui.output.dataset['promptIds'] = Array.from(prompt).join(',');
    const promptText = wordPieceLines(tok.decode(prompt, { skipSpecialTokens: false }));
    const out: number[] = [];
    const show = (): void => {
      const text = wordPieceLines(tok.decode(Int32Array.from([...prompt, ...out]), { skipSpecialTokens: false }));
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
    ui.output.dataset['text'] = wordPieceLines(
      tok.decode(Int32Array.from([...prompt, ...out]), { skipSpecialTokens: false }),
    );
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
  if (ui.folder.files !== null && ui.folder.files.length > 0) void open(checkpointBytesFromFiles(ui.folder.files));
});
ui.loadUrl.addEventListener('click', () => {
  if (ui.url.value.trim() !== '') void open(fetchCheckpointBytes(new URL(ui.url.value.trim(), document.baseURI).href));
});
ui.vocabFile.addEventListener('change', () => {
  vocabText = undefined;
});
ui.run.addEventListener('click', () => void generate());

backend.catch((err: unknown) => fail(ui.backend, err));
const fromUrl = params.get('checkpoint');
if (fromUrl !== null) {
  ui.url.value = fromUrl;
  const opened = open(fetchCheckpointBytes(new URL(fromUrl, document.baseURI).href));
  if (params.get('autorun') === '1') void opened.then(() => generate());
}
