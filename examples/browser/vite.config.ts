import { defineConfig } from 'vite';

// Vite resolves the "browser" export condition for the page without being told. minify: false — tfjs-backend-wasm
// starts its pthread workers from the source text of a function, which minification breaks once the page is
// cross-origin isolated and uses threads (docs/gpu-layers.md, In the browser).
export default defineConfig({
  base: './',
  build: { outDir: 'dist', target: 'es2022', minify: false, chunkSizeWarningLimit: 4096 },
});
