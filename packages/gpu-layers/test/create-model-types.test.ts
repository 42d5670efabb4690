// createModel's overloads narrow its return type by a literal `kind` (a type-level test: `pnpm typecheck` checks the
// expectTypeOf lines, and the runtime assertions check that the classes match the types).
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createModel,
  GrassmannLM,
  TransformerLM,
  type GrassmannConfig,
  type ModelConfig,
  type TransformerConfig,
} from '@grassflow/gpu-layers';

const tiny = { vocabSize: 32, dModel: 8, nLayers: 1, dFF: 16, maxLen: 8 };

/** Full configs of one kind narrow too: checked by the type checker only (never called, so nothing is built). */
function fullConfigsNarrow(g: GrassmannConfig, t: TransformerConfig, m: ModelConfig): void {
  expectTypeOf(createModel(g)).toEqualTypeOf<GrassmannLM>();
  expectTypeOf(createModel(t)).toEqualTypeOf<TransformerLM>();
  expectTypeOf(createModel(m)).toEqualTypeOf<GrassmannLM | TransformerLM>();
}

describe('createModel narrows by kind', () => {
  it("kind 'grassmann' gives a GrassmannLM, kind 'transformer' a TransformerLM, a kind not known statically the union", () => {
    const g = createModel({ kind: 'grassmann', ...tiny, r: 3, offsets: [[1]] });
    const t = createModel({ kind: 'transformer', ...tiny, nHeads: 2 });
    expectTypeOf(g).toEqualTypeOf<GrassmannLM>();
    expectTypeOf(t).toEqualTypeOf<TransformerLM>();
    expect(g).toBeInstanceOf(GrassmannLM);
    expect(t).toBeInstanceOf(TransformerLM);
    expect(fullConfigsNarrow).toBeTypeOf('function');
    g.dispose();
    t.dispose();
  });
});
