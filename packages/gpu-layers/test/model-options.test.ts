// MODEL_OPTIONS, the one table of the optional architecture fields: the table is consistent, and validation,
// defaults and the layers' checks all follow it.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CausalGrassmannMixing,
  GrassmannBlock,
  MODEL_OPTIONS,
  ModelConfigError,
  OPTIONAL_DEFAULTS,
  TransformerBlock,
  validateModelConfig,
  type EaEps,
  type FullModelConfig,
  type GrassmannBlockArgs,
  type GrassmannConfig,
  type GrassmannGate,
  type TransformerConfig,
} from '@grassflow/gpu-layers';

const refusal = (config: unknown): ModelConfigError | null => {
  try {
    validateModelConfig(config);
    return null;
  } catch (e) {
    if (e instanceof ModelConfigError) return e;
    throw e;
  }
};

describe('MODEL_OPTIONS', () => {
  it('is consistent: a default among the values, kinds given, a kebab-case flag of the field name', () => {
    for (const [name, o] of Object.entries(MODEL_OPTIONS)) {
      expect(o.kinds.length, name).toBeGreaterThan(0);
      expect(o.flag, name).toBe(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
      expect(o.why.length, name).toBeGreaterThan(0);
      expect(o.doc.length, name).toBeGreaterThan(0);
      if (o.type === 'choice') expect(o.values, name).toContain(o.default);
    }
  });

  it('gives OPTIONAL_DEFAULTS, by kind, the values they had before the table (a Transformer drops its branch)', () => {
    expect(OPTIONAL_DEFAULTS).toEqual({
      grassmann: { head: 'tied', gate: 'blend', dropoutAt: 'stream', mixerNorm: false },
      transformer: { head: 'tied', dropoutAt: 'branch', eaEps: 'absolute' },
    });
  });

  it("leaves dropoutAt out of a config at its kind's default and keeps it otherwise", () => {
    expect('dropoutAt' in validateModelConfig({ kind: 'transformer', dropoutAt: 'branch' })).toBe(false);
    expect(validateModelConfig({ kind: 'transformer', dropoutAt: 'stream' }).dropoutAt).toBe('stream');
    expect('dropoutAt' in validateModelConfig({ kind: 'grassmann', dropoutAt: 'stream' })).toBe(false);
    expect(validateModelConfig({ kind: 'grassmann', dropoutAt: 'branch' }).dropoutAt).toBe('branch');
    expect(new TransformerBlock({ nHeads: 2, dFF: 8 }).dropoutAt).toBe('branch');
    expect(new TransformerBlock({ nHeads: 2, dFF: 8, dropoutAt: 'stream' }).getConfig()['dropoutAt']).toBe('stream');
    expect('dropoutAt' in new TransformerBlock({ nHeads: 2, dFF: 8 }).getConfig()).toBe(false);
  });

  it('validateModelConfig checks each field against the table, once, and refuses fields of the other kind', () => {
    for (const [name, o] of Object.entries(MODEL_OPTIONS)) {
      const kind = o.kinds[0];
      if (o.type === 'int-list') continue; // cutoffs: below
      const bad = refusal({ kind, [name]: 'no such value' });
      expect(bad?.field, name).toBe(name);
      const other = (['grassmann', 'transformer'] as const).find((k) => !(o.kinds as readonly string[]).includes(k));
      if (other !== undefined) {
        expect(refusal({ kind: other, [name]: o.default })?.message, name).toMatch(/applies to .* models only/);
      }
      // the default is left out, any other value is kept
      expect(name in validateModelConfig({ kind, [name]: o.default }), name).toBe(false);
      const other2 = o.type === 'choice' ? o.values.find((v) => v !== o.default) : !o.default;
      expect(validateModelConfig({ kind, [name]: other2 }), name).toMatchObject({ [name]: other2 });
    }
    expect(refusal({ kind: 'grassmann', cutoffs: [10] })?.field).toBe('cutoffs');
    expect(validateModelConfig({ kind: 'grassmann', head: 'adaptive' }).cutoffs).toEqual([2000, 10000]);
  });

  it("the layers check their options with the table's check when they are made", () => {
    expect(() => new CausalGrassmannMixing({ r: 4, offsets: [1], gate: 'sum' as 'blend' })).toThrow(
      "CausalGrassmannMixing: gate must be one of 'blend', 'additive', got \"sum\"",
    );
    expect(() => new GrassmannBlock({ r: 4, offsets: [1], dFF: 8, mixerNorm: 1 as unknown as boolean })).toThrow(
      'GrassmannBlock: mixerNorm must be true or false, got 1',
    );
    expect(() => new TransformerBlock({ nHeads: 2, dFF: 8, eaEps: 'x' as 'relative' })).toThrow(RangeError);
  });

  it('derives the types the fields had when each was declared by hand (tsc checks this)', () => {
    expectTypeOf<GrassmannConfig['gate']>().toEqualTypeOf<'blend' | 'additive' | undefined>();
    expectTypeOf<GrassmannConfig['dropoutAt']>().toEqualTypeOf<'stream' | 'branch' | undefined>();
    expectTypeOf<GrassmannConfig['mixerNorm']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<GrassmannConfig['head']>().toEqualTypeOf<'tied' | 'adaptive' | undefined>();
    expectTypeOf<GrassmannConfig['cutoffs']>().toEqualTypeOf<number[] | undefined>();
    expectTypeOf<TransformerConfig['eaEps']>().toEqualTypeOf<'absolute' | 'relative' | undefined>();
    expectTypeOf<FullModelConfig['eaEps']>().toEqualTypeOf<'absolute' | 'relative' | undefined>();
    expectTypeOf<FullModelConfig['gate']>().toEqualTypeOf<'blend' | 'additive' | undefined>();
    expectTypeOf<GrassmannBlockArgs['dropoutAt']>().toEqualTypeOf<'stream' | 'branch' | undefined>();
    expectTypeOf<GrassmannGate>().toEqualTypeOf<'blend' | 'additive'>();
    expectTypeOf<EaEps>().toEqualTypeOf<'absolute' | 'relative'>();
    // a field of the other kind is not in a kind's type
    expectTypeOf<'gate' extends keyof TransformerConfig ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<'eaEps' extends keyof GrassmannConfig ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<TransformerConfig['dropoutAt']>().toEqualTypeOf<'stream' | 'branch' | undefined>();
    expectTypeOf<typeof OPTIONAL_DEFAULTS>().toEqualTypeOf<{
      grassmann: {
        readonly head: 'tied';
        readonly gate: 'blend';
        readonly dropoutAt: 'stream';
        readonly mixerNorm: false;
      };
      transformer: { readonly head: 'tied'; readonly dropoutAt: 'branch'; readonly eaEps: 'absolute' };
    }>();
  });
});
