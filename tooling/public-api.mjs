// The one public-API suite every published package runs (its test/public-api.test.ts calls describePublicApi): the
// names each entry of package.json's `exports` offers (values and types, as TypeScript sees src/<entry>.ts) must be
// the list in test/public-api.json, so that a new export, or a removed one, is a deliberate change made in that file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Entry → sorted exported names, for '.' (src/index.ts) and each `./x` of `exports` whose source is src/x.ts. */
export function publicApi(packageDir) {
  const { exports = {} } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const entries = Object.keys(exports)
    .map((key) => [key, join(packageDir, 'src', key === '.' ? 'index.ts' : `${key.slice(2)}.ts`)])
    .filter(([, file]) => existsSync(file));
  const program = ts.createProgram(
    entries.map(([, file]) => file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      noEmit: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    entries.map(([key, file]) => {
      const symbol = checker.getSymbolAtLocation(program.getSourceFile(file));
      const names = symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name);
      return [key, names.sort()];
    }),
  );
}

export function describePublicApi(packageDir) {
  describe('public API', () => {
    it('each entry exports exactly the names pinned in test/public-api.json', () => {
      const pinned = JSON.parse(readFileSync(join(packageDir, 'test', 'public-api.json'), 'utf8'));
      const actual = publicApi(packageDir);
      const changes = Object.keys({ ...pinned, ...actual }).flatMap((entry) => {
        const want = new Set(pinned[entry] ?? []);
        const got = new Set(actual[entry] ?? []);
        return [
          ...[...got].filter((n) => !want.has(n)).map((n) => `${entry}: + ${n}`),
          ...[...want].filter((n) => !got.has(n)).map((n) => `${entry}: - ${n}`),
        ];
      });
      expect(changes, 'a deliberate change of the public API is made in test/public-api.json too').toEqual([]);
    });
  });
}
