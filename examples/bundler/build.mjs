// One ES module for Node: our code and the @grassflow packages bundled, tfjs left to node_modules. tfjs's Node builds
// cannot be bundled: tfjs-backend-wasm finds its .wasm files next to its own file (__dirname), tfjs-node, webgpu and
// koffi load native addons, and tfjs-backend-cpu's "sideEffects" list omits its Node entry, so a bundler drops the
// import that registers the cpu backend. `tokenizers` (Hugging Face's native binding) stays external for the same
// reason. External packages are resolved from this folder at run time, so they are direct dependencies here.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: 'dist/main.js',
  external: ['@tensorflow/*', 'tokenizers', 'webgpu', 'koffi'],
  logLevel: 'warning',
});
