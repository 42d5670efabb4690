// Every field of a model config, declared once, in two parts of one table: MODEL_FIELDS, the fields of the model's
// size and kind (stored always), and MODEL_OPTIONS, the optional architecture fields (stored only where they differ
// from their default). For each: the kinds that have it, its type, its default and why, its doc line and its CLI
// flag; its key is its stored name (config.json's). The config types, the stored field order, validation, the
// defaults, the layers' arguments and getConfig, and the apps' flags and --help all derive from this table.

/** The two model kinds. */
type Kind = 'grassmann' | 'transformer';

/**
 * Who reads a field: 'head' the language model's output head, 'block' a residual block, 'mixer' the Grassmann
 * mixing layer (and so also the block around it, which passes it on).
 */
type Scope = 'head' | 'block' | 'mixer';

interface OptionBase {
  /** The model kinds whose configs have the field; a config of another kind giving it is refused. */
  kinds: readonly Kind[];
  scope: Scope;
  /** The reason for the default (docs, --help). */
  why: string;
  /** The CLI flag of train/compare/bench (without the dashes). */
  flag: string;
  /** One line saying what the field does (docs, --help). */
  doc: string;
  /** Has an effect only with this attention (a config keeps it either way; the CLI refuses it without). */
  onlyWith?: { attention: 'dpa' | 'ea' };
  /**
   * An ablation: a variant kept to compare against (another reproduction's block), not a recommended setting; what
   * the measured results say of it (docs/results.md). Its default is the paper's model.
   */
  ablation?: string;
}

/** What a field of MODEL_FIELDS has besides its type. */
interface FieldBase {
  /** The model kinds whose configs have the field (a config of the other kind may carry it, unused). */
  kinds: readonly Kind[];
  /** The reason for the default (docs, --help). */
  why: string;
  /** One line saying what the field does (docs, --help). */
  doc: string;
  /**
   * The override flag of train/compare/bench, when the field has one of its own (dFF follows --d-model, maxLen
   * --seq-len, attention --model): its name without the dashes, what it does there, bounds of its own.
   */
  flag?: { name: string; help: string; min?: number; max?: number };
}

/** An integer field >= min. */
interface IntField extends FieldBase {
  type: 'int';
  min: number;
  default: number;
}

/** A number field in [min, max), or > min when it has no max. */
interface NumberField extends FieldBase {
  type: 'number';
  min: number;
  max?: number;
  default: number;
}

/** A field with named values. */
interface ChoiceField extends FieldBase {
  type: 'choice';
  values: readonly string[];
  default: string;
}

/** One non-empty list of integers >= 1 per layer. */
interface LayerListsField extends FieldBase {
  type: 'layer-lists';
  default: readonly (readonly number[])[];
}

export type ModelField = IntField | NumberField | ChoiceField | LayerListsField;

/**
 * The fields of a model's size and kind (besides `kind` itself, 'grassmann' or 'transformer'), in the order
 * config.json stores them; the defaults are the paper's 6-layer model (nanoGPT style: a reason on each field).
 * `offsets` is the only default that depends on another field: when nLayers differs from 6 and offsets are not
 * given, layer i gets the single offset [1, 2, 4, 8, 12, 16][i mod 6] (offsetSchedule 'per-layer').
 */
export const MODEL_FIELDS = {
  attention: {
    kinds: ['transformer'],
    type: 'choice',
    values: ['dpa', 'ea'],
    default: 'dpa',
    why: 'softmax attention, the standard baseline',
    doc: "'dpa' dot-product softmax attention or 'ea' expressive attention",
  },
  vocabSize: {
    kinds: ['grassmann', 'transformer'],
    type: 'int',
    min: 1,
    default: 30522,
    why: "BERT WordPiece, the paper's tokenizer",
    doc: 'vocabulary size V',
  },
  dModel: {
    kinds: ['grassmann', 'transformer'],
    type: 'int',
    min: 1,
    default: 256,
    why: "the paper's width",
    doc: 'model width d',
    flag: { name: 'd-model', help: 'model width d (d_ff becomes 4d)', min: 2 },
  },
  nLayers: {
    kinds: ['grassmann', 'transformer'],
    type: 'int',
    min: 1,
    default: 6,
    why: "the paper's small model (paper-12l: 12)",
    doc: 'number of blocks',
    flag: { name: 'layers', help: 'number of blocks' },
  },
  dFF: {
    kinds: ['grassmann', 'transformer'],
    type: 'int',
    min: 1,
    default: 1024,
    why: '4d, as the paper and GPT-2',
    doc: 'feed-forward width d_ff',
  },
  maxLen: {
    kinds: ['grassmann', 'transformer'],
    type: 'int',
    min: 1,
    default: 128,
    why: "the paper's training block of the 6-layer model",
    doc: 'longest sequence L, the size of the positional table',
  },
  r: {
    kinds: ['grassmann'],
    type: 'int',
    min: 2,
    default: 32,
    why: "C(32,2) = 496 Plücker coordinates, the paper's reduced width",
    doc: 'reduced width r (C(r,2) Plücker coordinates per pair)',
    flag: { name: 'r', help: 'Grassmann reduced width r' },
  },
  offsets: {
    kinds: ['grassmann'],
    type: 'layer-lists',
    default: [[1], [2], [4], [8], [12], [16]],
    why: 'one offset per layer, doubling then ×1.5: receptive field 43',
    doc: 'offsets Δ of each layer, one array per layer',
    flag: {
      name: 'offsets',
      help: 'Grassmann offsets, one per layer cycling (all in every layer for paper-6l-multi)',
    },
  },
  eps: {
    kinds: ['grassmann', 'transformer'],
    type: 'number',
    min: 0,
    default: 1e-6,
    why: "keeps p̂ = p/sqrt(‖p‖² + ε²) finite at p = 0 and EA's denominator > 0, below float32 noise",
    doc: "ε of the Plücker normalisation and of expressive attention's denominator",
  },
  nHeads: {
    kinds: ['transformer'],
    type: 'int',
    min: 1,
    default: 4,
    why: 'd_head = 64 at d = 256',
    doc: 'attention heads H (d divisible by H)',
    flag: { name: 'heads', help: 'attention heads H of the Transformers (d divisible by H)' },
  },
  norm: {
    kinds: ['grassmann', 'transformer'],
    type: 'choice',
    values: ['post', 'pre'],
    default: 'post',
    why: 'as the paper',
    doc: "'post' LayerNorm (paper) or 'pre' LayerNorm with a final ln_f",
    flag: { name: 'norm', help: 'post-LN (paper) or pre-LN' },
  },
  dropout: {
    kinds: ['grassmann', 'transformer'],
    type: 'number',
    min: 0,
    max: 1,
    default: 0.1,
    why: "the paper's rate",
    doc: 'dropout rate in [0, 1)',
    flag: { name: 'dropout', help: 'dropout rate', max: 0.99 },
  },
} as const satisfies Record<string, ModelField>;

type Fields = typeof MODEL_FIELDS;
export type ModelFieldName = keyof typeof MODEL_FIELDS;

/** The TypeScript type of a MODEL_FIELDS field's value. */
type FieldValue<F> = F extends { type: 'choice'; values: readonly (infer V)[] }
  ? V
  : F extends { type: 'layer-lists' }
    ? number[][]
    : number;

/** The MODEL_FIELDS fields of kinds K, with their types (K a union: the fields of any of them). */
export type ModelFields<K extends Kind> = {
  -readonly [N in ModelFieldName as K extends Fields[N]['kinds'][number] ? N : never]: FieldValue<Fields[N]>;
};

/** The field names of MODEL_FIELDS in stored order. */
export const FIELD_NAMES = Object.keys(MODEL_FIELDS) as ModelFieldName[];

/** A MODEL_FIELDS entry, seen as the union type (for code that handles any field). */
export const fieldSpec = (name: ModelFieldName): ModelField => MODEL_FIELDS[name];

/** The default of a MODEL_FIELDS field (e.g. a layer's eps when its arguments give none). */
export function fieldDefault<N extends ModelFieldName>(name: N): FieldValue<Fields[N]> {
  const d = MODEL_FIELDS[name].default;
  return (Array.isArray(d) ? d.map((layer: readonly number[]) => [...layer]) : d) as FieldValue<Fields[N]>;
}

/**
 * What is wrong with `value` for a field of MODEL_FIELDS other than offsets ('must be …, got …'), or null when it
 * is valid (offsets depend on nLayers: validateModelConfig checks them).
 */
export function fieldProblem(name: ModelFieldName, value: unknown): string | null {
  const f = fieldSpec(name);
  const got = `got ${JSON.stringify(value)}`;
  if (f.type === 'int') {
    const ok = typeof value === 'number' && Number.isInteger(value) && value >= f.min;
    return ok ? null : `must be an integer >= ${f.min}, ${got}`;
  }
  if (f.type === 'number') {
    if (f.max === undefined) {
      const ok = typeof value === 'number' && value > f.min && Number.isFinite(value);
      return ok ? null : `must be a finite number > ${f.min}, ${got}`;
    }
    const ok = typeof value === 'number' && value >= f.min && value < f.max;
    return ok ? null : `must be a number in [${f.min}, ${f.max}), ${got}`;
  }
  if (f.type === 'choice') {
    if (typeof value === 'string' && f.values.includes(value)) return null;
    return `must be one of ${f.values.map((v) => `'${v}'`).join(', ')}, ${got}`;
  }
  return null;
}

/** A default that differs by kind: `default` is the first kind's, `defaultFor` names the others'. */
interface KindDefaults<V> {
  defaultFor?: Partial<Record<Kind, V>>;
}

/** A field with named values (a string in config.json). */
interface ChoiceOption extends OptionBase, KindDefaults<string> {
  type: 'choice';
  values: readonly string[];
  default: string;
}

/** An on/off field (stored only as `true`). */
interface BooleanOption extends OptionBase {
  type: 'boolean';
  default: boolean;
}

/**
 * A list of integers that belongs to another field's value (`needs`): stored, default filled in, exactly when that
 * field has that value, and refused otherwise.
 */
interface IntListOption extends OptionBase {
  type: 'int-list';
  default: readonly number[];
  needs: { field: 'head'; value: 'adaptive' };
}

export type ModelOption = ChoiceOption | BooleanOption | IntListOption;

/** Cutoffs of an adaptive head when a config gives none (PyTorch's example's, good for V = 30,522 WordPiece). */
export const ADAPTIVE_HEAD_DEFAULTS = { cutoffs: [2000, 10000], divValue: 4 } as const;

/**
 * The optional architecture fields, in the order config.json stores them. A validated config leaves a field out
 * where it has its default, so configs (and checkpoints, and study keys) written before the field existed stay
 * exactly as they were; a new field goes at the end.
 */
export const MODEL_OPTIONS = {
  /** Output head: 'tied' (logits = h·tok_embᵀ) or 'adaptive' (its own weights, see ADAPTIVE_HEAD_DEFAULTS). */
  head: {
    kinds: ['grassmann', 'transformer'],
    scope: 'head',
    type: 'choice',
    values: ['tied', 'adaptive'],
    default: 'tied',
    why: "the paper's (its Transformer's 12.59M parameters are only reached with a tied head)",
    flag: 'head',
    doc: "output head: 'tied' to the token embedding, or an 'adaptive' softmax (Grave et al. 2017; faster on CPU)",
  },
  /** Adaptive head only: the increasing cluster boundaries 0 < c_1 < … < c_k < V. */
  cutoffs: {
    kinds: ['grassmann', 'transformer'],
    scope: 'head',
    type: 'int-list',
    default: ADAPTIVE_HEAD_DEFAULTS.cutoffs,
    needs: { field: 'head', value: 'adaptive' },
    why: "PyTorch's example's, good for V = 30,522 WordPiece",
    flag: 'cutoffs',
    doc: 'adaptive head only: cluster boundaries, increasing integers 0 < c_1 < … < c_k < V',
  },
  /** Gate form: 'blend' h_mix = α⊙h + (1−α)⊙g, or 'additive': the mixer returns α⊙g, added to h as a residual. */
  gate: {
    kinds: ['grassmann'],
    scope: 'mixer',
    type: 'choice',
    values: ['blend', 'additive'],
    default: 'blend',
    why: "the paper's: the gate is the skip path of mixing",
    flag: 'gate',
    doc: "Grassmann gate: 'blend' α⊙h + (1−α)⊙g, or 'additive' α⊙g added to h as a residual (a reproduction's)",
    ablation: "kanenorman's block; against the blend +0.6 / −0.2 PPL at the CPU study's budget: no measurable effect",
  },
  /**
   * Post-LN dropout placement: 'stream' drops the whole stream after LN1 (Grassmann ĥ = Dropout(LN1(h_mix)),
   * Transformer x = Dropout(LN1(h + Attn(h)))), 'branch' only the mixing branch (x = LN1(h + Dropout(Attn(h)))).
   */
  dropoutAt: {
    kinds: ['grassmann', 'transformer'],
    scope: 'block',
    type: 'choice',
    values: ['stream', 'branch'],
    default: 'stream',
    defaultFor: { transformer: 'branch' },
    why: "each kind's own block: the Grassmann paper's Dropout(LN1(h_mix)), the Transformer's LN1(h + Dropout(Attn))",
    flag: 'dropout-at',
    doc: "post-LN dropout: the whole 'stream' after LN1, or only the mixing 'branch' (pre-LN: no effect)",
  },
  /** A LayerNorm (ε = 1e-5) on the mixer's output inside the mixer. */
  mixerNorm: {
    kinds: ['grassmann'],
    scope: 'mixer',
    type: 'boolean',
    default: false,
    why: "the paper's mixer has no norm of its own",
    flag: 'mixer-norm',
    doc: "Grassmann: a LayerNorm on the mixer's output (a reproduction's)",
    ablation: "alphaXiv's block; −3.5% PPL pre-LN at the CPU study's budget, chosen on the slice it was scored on",
  },
  /** Expressive attention's ε: 'absolute' a = e/(Σe + ε), or 'relative' a = e/(Σe + ε·max e + ε²), scale-free. */
  eaEps: {
    kinds: ['transformer'],
    scope: 'block',
    type: 'choice',
    values: ['absolute', 'relative'],
    default: 'absolute',
    why: "the EA paper's a = e/(Σe + ε)",
    flag: 'ea-eps',
    onlyWith: { attention: 'ea' },
    doc: "expressive attention's ε: 'absolute' e/(Σe + ε), or 'relative' e/(Σe + ε·max e + ε²), scale-free",
    ablation: 'a check that EA was not handicapped at init: −1.3 / −0.3 PPL, no measurable effect',
  },
} as const satisfies Record<string, ModelOption>;

type Options = typeof MODEL_OPTIONS;
export type ModelOptionName = keyof Options;

/** The TypeScript type of a field's value. */
type ValueOf<O> = O extends { type: 'choice'; values: readonly (infer V)[] }
  ? V
  : O extends { type: 'boolean' }
    ? boolean
    : number[];

/** The value type of one field, e.g. ModelOptionValue<'gate'> = 'blend' | 'additive'. */
export type ModelOptionValue<N extends ModelOptionName> = ValueOf<Options[N]>;

/** The fields kinds K have and scopes S read. */
type NamesOf<K extends Kind, S extends Scope> = {
  [N in ModelOptionName]: [K & Options[N]['kinds'][number]] extends [never]
    ? never
    : Options[N]['scope'] extends S
      ? N
      : never;
}[ModelOptionName];

/** The optional fields of kind K read by scopes S, all optional (absent: the default): a config's or a layer's. */
export type ModelOptions<K extends Kind, S extends Scope = Scope> = {
  [N in ModelOptionName as N extends NamesOf<K, S> ? N : never]?: ValueOf<Options[N]>;
};

/** The field names in table order: the order config.json stores them in, after the fields every config has. */
export const OPTION_NAMES = Object.keys(MODEL_OPTIONS) as ModelOptionName[];

/** The table's entry of a field, seen as the union type (for code that handles any field). */
export const optionSpec = (name: ModelOptionName): ModelOption => MODEL_OPTIONS[name];

/** The fields of `kind` read by `scopes`, in table order (the stored order). */
export function optionNames<K extends Kind, S extends Scope>(kind: K, scopes: readonly S[]): Array<NamesOf<K, S>> {
  return OPTION_NAMES.filter((n) => {
    const o = optionSpec(n);
    return o.kinds.includes(kind) && (scopes as readonly Scope[]).includes(o.scope);
  }) as Array<NamesOf<K, S>>;
}

/**
 * What is wrong with `value` for a choice or boolean field ('must be one of …, got …'), or null when it is valid.
 * The one check of these values: validateModelConfig and the layers' constructors both use it.
 */
export function optionProblem(name: ModelOptionName, value: unknown): string | null {
  const o = optionSpec(name);
  if (o.type === 'choice') {
    if (typeof value === 'string' && o.values.includes(value)) return null;
    return `must be one of ${o.values.map((s) => `'${s}'`).join(', ')}, got ${JSON.stringify(value)}`;
  }
  if (o.type === 'boolean')
    return typeof value === 'boolean' ? null : `must be true or false, got ${JSON.stringify(value)}`;
  return null; // an int-list depends on other fields: validateModelConfig checks it
}

/** A field's default in a config of `kind` (dropoutAt's differs by kind; the others' do not). */
export function optionDefault(name: ModelOptionName, kind: Kind): ModelOption['default'] {
  const o = optionSpec(name);
  return (o.type === 'choice' ? o.defaultFor?.[kind] : undefined) ?? o.default;
}

/** Whether `value` is the field's default in a config of `kind` (for leaving it out of a stored config). */
export function isOptionDefault(name: ModelOptionName, value: unknown, kind: Kind): boolean {
  return value === optionDefault(name, kind);
}

/**
 * A layer's options from its constructor arguments: each checked (a RangeError naming `who`), absent ones at their
 * defaults. Layers check once here, when built; their forward passes trust the values.
 */
export function layerOptions<K extends Kind, S extends Scope>(
  who: string,
  kind: K,
  scopes: readonly S[],
  args: ModelOptions<K, S>,
): Required<ModelOptions<K, S>> {
  const given = args as Partial<Record<ModelOptionName, unknown>>;
  const out: Partial<Record<ModelOptionName, unknown>> = {};
  for (const name of optionNames(kind, scopes)) {
    const value = given[name] === undefined ? optionDefault(name, kind) : given[name];
    const problem = optionProblem(name, value);
    if (problem !== null) throw new RangeError(`${who}: ${name} ${problem}`);
    out[name] = value;
  }
  return out as Required<ModelOptions<K, S>>;
}

/**
 * The fields of `names` that `values` gives and that differ from their defaults, in table order: what a layer's
 * getConfig stores and what a language model passes to its blocks (so configs without them stay as they were).
 */
export function nonDefaultOptions<N extends ModelOptionName>(
  values: { readonly [K in N]?: ModelOptionValue<K> },
  names: readonly N[],
  kind: Kind,
): { [K in N]?: ModelOptionValue<K> } {
  const out: { [K in N]?: ModelOptionValue<K> } = {};
  for (const name of names) {
    const v = values[name];
    if (v !== undefined && !isOptionDefault(name, v, kind)) out[name] = v;
  }
  return out;
}
