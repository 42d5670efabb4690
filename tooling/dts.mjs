// Type declarations of a published package, bundled once per entry with real names: rollup + rollup-plugin-dts over
// src/, written as .d.ts (import) and .d.cts (require). tsup's own dts build names shared declaration chunks
// `<name>-<hash>` and exports from them under one-letter aliases (`B as BackendInfo`), which is what a user's editor
// then shows. Here a chunk keeps its module's name and every declaration its own: a package with one entry gets one
// self-contained file per module kind; entries that share declarations (gpu-layers' index, browser and internals)
// import them from dist/shared/<module>.d.ts, so a class is one type across the entries (two copies of a class with
// private members would not be assignable to each other).
import { isAbsolute, join, parse } from 'node:path';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import ts from 'typescript';

/** Writes dist/<entry>.d.ts and .d.cts for each `entries` path (relative to packageDir, e.g. 'src/index.ts'). */
export async function bundleDeclarations(packageDir, entries) {
  const input = Object.fromEntries(entries.map((e) => [parse(e).name, join(packageDir, e)]));
  const bundle = await rollup({
    input,
    plugins: [
      dts({
        tsconfig: join(packageDir, 'tsconfig.json'),
        // what tsup's dts build sets: declarations only, and the package's own typecheck is `pnpm typecheck`
        compilerOptions: {
          noEmit: false,
          declaration: true,
          emitDeclarationOnly: true,
          noEmitOnError: true,
          declarationMap: false,
          skipLibCheck: true,
          preserveSymlinks: false,
          target: ts.ScriptTarget.ESNext,
        },
      }),
    ],
    // dependencies and peers stay imports, as in the JavaScript build
    external: (id) => !id.startsWith('.') && !isAbsolute(id),
    onwarn(warning, warn) {
      if (warning.code !== 'EMPTY_BUNDLE') warn(warning);
    },
  });
  try {
    for (const ext of ['.d.ts', '.d.cts']) {
      await bundle.write({
        dir: join(packageDir, 'dist'),
        format: 'es',
        entryFileNames: `[name]${ext}`,
        chunkFileNames: `shared/[name]${ext}`, // no hash: the same name from build to build
        minifyInternalExports: false,
      });
    }
  } finally {
    await bundle.close();
  }
}
