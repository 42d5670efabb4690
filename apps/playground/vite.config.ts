// The playground's build: a static folder (dist/) with tfjs-backend-wasm's three .wasm files under wasm/ and, when a
// data folder holds it, the BERT uncased vocabulary under vocab/ — what the page loads at run time.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { WASM_FILES } from '@grassflow/gpu-layers/browser';
import { ISOLATION_HEADERS } from './scripts/serve.mjs';

const require = createRequire(import.meta.url);
const wasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
const VOCAB_PATH = 'vocab/bert-base-uncased-vocab.txt';

/** bert-vocab/vocab.txt of the data folder (GRASSFLOW_DATA_DIR, else ~/.cache/grassflow), or undefined. */
function vocabFile(): string | undefined {
  const dirs = [process.env['GRASSFLOW_DATA_DIR'], join(homedir(), '.cache', 'grassflow')].filter(
    (d): d is string => d !== undefined && d !== '',
  );
  return dirs.map((d) => resolve(d, 'bert-vocab', 'vocab.txt')).find((f) => existsSync(f));
}

/** The files the page fetches: emitted into the build, served by the dev server. */
function runtimeFiles(): Plugin {
  const files = new Map<string, () => Buffer>(
    WASM_FILES.map((name) => [`wasm/${name}`, () => readFileSync(join(wasmDir, 'dist', name))]),
  );
  const vocab = vocabFile();
  if (vocab !== undefined) files.set(VOCAB_PATH, () => readFileSync(vocab));
  return {
    name: 'grassflow-runtime-files',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const file = files.get((req.url ?? '').split('?')[0]!.replace(/^\//, ''));
        if (file === undefined) return next();
        res.setHeader('Content-Type', req.url?.endsWith('.wasm') ? 'application/wasm' : 'text/plain; charset=utf-8');
        res.end(file());
      });
    },
    generateBundle() {
      for (const [fileName, read] of files) this.emitFile({ type: 'asset', fileName, source: read() });
      if (vocab === undefined)
        this.warn(
          `no bert-vocab/vocab.txt in GRASSFLOW_DATA_DIR or ~/.cache/grassflow: the page asks for the vocabulary file`,
        );
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [runtimeFiles()],
  resolve: { conditions: ['browser'] },
  // minify: false — tfjs-backend-wasm starts its pthread workers from the source text of its threaded factory
  // (factory.toString()); minified, that text names variables of the bundle the worker lacks ("e is not defined").
  build: { outDir: 'dist', target: 'es2022', chunkSizeWarningLimit: 4096, minify: false },
  server: { headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
});
