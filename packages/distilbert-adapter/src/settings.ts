// One settings object for hub access (transformers.js `env` style); every field can be overridden per call.

/** Where model files come from and go to. Per-call options of `loadDistilBert` override these fields. */
export interface HubSettings {
  /**
   * Cache root (default `$GRASSFLOW_CACHE_DIR`, else `$XDG_CACHE_HOME/grassflow`, else `~/.cache/grassflow`).
   * Downloaded models go to `<cacheDir>/models/<owner>/<name>/<revision>/`, features to `<cacheDir>/features/`.
   */
  cacheDir?: string;
  /** Never download: use an explicit folder or the cache only (default: `$GRASSFLOW_OFFLINE` is `1` or `true`). */
  localFilesOnly?: boolean;
  /**
   * Hub endpoint replacing `https://huggingface.co` (files at `<mirror>/<owner>/<name>/resolve/<revision>/<file>`);
   * default `$HF_ENDPOINT`. `$GRASSFLOW_MIRROR` is honoured as in @grassflow/datasets
   * (`https://host/path` → `$GRASSFLOW_MIRROR/host/path`) when no endpoint is set.
   */
  mirror?: string;
  /** Branch, tag or commit of the hub repository (default 'main'). */
  revision?: string;
  /**
   * Hugging Face access token for private repositories (default `$HF_TOKEN`); never sent to another host after a
   * redirect.
   */
  token?: string;
  /** Upper bound on the size of a downloaded model.safetensors in bytes (default 2 GiB). */
  maxModelBytes?: number;
  /** Check the SHA-256 recorded in the cache manifest on every load from the cache (default true). */
  verifyCache?: boolean;
}

/**
 * The process-wide defaults, mutable: e.g. `hubSettings.cacheDir = '/data/models'` or
 * `hubSettings.localFilesOnly = true`. A per-call option wins over the field here, which wins over
 * the environment variables.
 */
export const hubSettings: HubSettings = {};
