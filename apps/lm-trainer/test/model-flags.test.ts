// The architecture flags (--gate, --mixer-norm, …) are derived from gpu-layers' MODEL_OPTIONS: one flag per field,
// its choices the field's values, and the model kinds a flag applies to are the table's.
import { describe, expect, it } from 'vitest';
import { MODEL_OPTIONS } from '@grassflow/gpu-layers';
import { formatHelp, parseFlags } from '@grassflow/training';
import { COMMON_TRAIN_FLAGS, modelConfigFrom } from '../src/shared/model-options.js';

const flags = (argv: string[]) => parseFlags(['--preset', 'tiny', ...argv], COMMON_TRAIN_FLAGS);
/** The sequence length (the model's positional table): tiny's, as train resolves it without --seq-len. */
const L = 16;

describe('architecture flags from MODEL_OPTIONS', () => {
  it('one flag per field, choices from its values, help from its doc line and the reason for its default', () => {
    const specs = COMMON_TRAIN_FLAGS as Record<string, { type: string; choices?: readonly string[]; help: string }>;
    const help = formatHelp('x', 'y', COMMON_TRAIN_FLAGS);
    for (const o of Object.values(MODEL_OPTIONS)) {
      const spec = specs[o.flag];
      expect(spec, o.flag).toBeDefined();
      if (o.type === 'choice') expect(spec?.choices).toEqual(o.values);
      expect(spec?.help).toContain(o.doc);
      expect(spec?.help).toContain(o.why);
      expect(help).toContain(`--${o.flag}`);
    }
  });

  it('each flag sets its field; the defaults leave the config as it was', () => {
    const plain = modelConfigFrom('grassmann', flags([]), 100, L);
    expect(modelConfigFrom('grassmann', flags(['--gate', 'blend', '--dropout-at', 'stream']), 100, L)).toEqual(plain);
    const g = modelConfigFrom(
      'grassmann',
      flags(['--gate', 'additive', '--dropout-at', 'branch', '--mixer-norm']),
      100,
      L,
    );
    expect(g).toMatchObject({ gate: 'additive', dropoutAt: 'branch', mixerNorm: true });
    const t = modelConfigFrom(
      'transformer-ea',
      flags(['--ea-eps', 'relative', '--head', 'adaptive', '--cutoffs', '20,50']),
      100,
      L,
    );
    expect(t).toMatchObject({ eaEps: 'relative', head: 'adaptive', cutoffs: [20, 50] });
    // --dropout-at is each kind's: a Transformer's default is 'branch', its control of the Grassmann placement 'stream'
    const dpa = modelConfigFrom('transformer-dpa', flags([]), 100, L);
    expect(modelConfigFrom('transformer-dpa', flags(['--dropout-at', 'branch']), 100, L)).toEqual(dpa);
    expect(modelConfigFrom('transformer-dpa', flags(['--dropout-at', 'stream']), 100, L)).toMatchObject({
      dropoutAt: 'stream',
    });
  });

  it("--help shows --dropout-at's default of each kind", () => {
    const help = formatHelp('x', 'y', COMMON_TRAIN_FLAGS);
    expect(help).toContain('model default grassmann stream, transformer branch');
  });

  it('a flag of another model kind, or --cutoffs without --head adaptive, is refused by name', () => {
    expect(() => modelConfigFrom('transformer-dpa', flags(['--mixer-norm']), 100, L)).toThrow(
      '--mixer-norm applies to --model grassmann, not to --model transformer-dpa',
    );
    expect(() => modelConfigFrom('transformer-dpa', flags(['--ea-eps', 'relative']), 100, L)).toThrow(
      '--ea-eps applies to --model transformer-ea, not to --model transformer-dpa',
    );
    expect(() => modelConfigFrom('grassmann', flags(['--cutoffs', '20']), 100, L)).toThrow(
      '--cutoffs needs --head adaptive',
    );
  });
});
