// The optional architecture fields of a model config, declared once: for each, the kinds that have it, its values,
// its default and why, the layer that reads it, its CLI flag and its doc line. The config types, the stored field
// order, validation, the layers' arguments and getConfig, and the apps' flags and --help all derive from this table.

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
