import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bertVocabPath, DatasetError, resolveDataDir, resolveTokenCacheDir, snliPath, userCacheDir, wikitextPath } from '../src/index';

describe('data location', () => {
  it('explicit path > GRASSFLOW_DATA_DIR > XDG_CACHE_HOME/grassflow > ~/.cache/grassflow', () => {
    const env = { GRASSFLOW_DATA_DIR: '/srv/data', XDG_CACHE_HOME: '/xdg' };
    expect(resolveDataDir({ dataDir: '/explicit', env })).toBe('/explicit');
    expect(resolveDataDir({ env })).toBe('/srv/data');
    expect(resolveDataDir({ env: { XDG_CACHE_HOME: '/xdg' } })).toBe('/xdg/grassflow');
    expect(resolveDataDir({ env: {} })).toBe(join(homedir(), '.cache', 'grassflow'));
    expect(resolveDataDir({ env: { GRASSFLOW_DATA_DIR: 'rel/dir' } })).toBe(resolve('rel/dir'));
    expect(userCacheDir({ XDG_CACHE_HOME: '' })).toBe(join(homedir(), '.cache', 'grassflow'));
  });

  it('per-file accessors follow the shared layout', () => {
    const o = { dataDir: '/d' };
    expect(wikitextPath('train', 'tokens', o)).toBe('/d/wikitext-2/wiki.train.tokens');
    expect(wikitextPath('valid', 'raw', o)).toBe('/d/wikitext-2/wiki.valid.raw');
    expect(snliPath('dev', o)).toBe('/d/snli/snli_1.0_dev.jsonl');
    expect(snliPath('train_0.01', o)).toBe('/d/snli/snli_1.0_train_0.01.jsonl');
    expect(bertVocabPath(o)).toBe('/d/bert-vocab/vocab.txt');
  });

  it('rejects unknown splits with a typed error', () => {
    expect(() => wikitextPath('dev' as 'train', 'tokens', { dataDir: '/d' })).toThrow(DatasetError);
    expect(() => snliPath('validation' as 'dev', { dataDir: '/d' })).toThrow(/one of 'train', 'dev', 'test'/);
  });

  it('token cache folder: option > GRASSFLOW_CACHE_DIR > <user cache>/token-ids', () => {
    expect(resolveTokenCacheDir({ cacheDir: '/c', env: { GRASSFLOW_CACHE_DIR: '/e' } })).toBe('/c');
    expect(resolveTokenCacheDir({ env: { GRASSFLOW_CACHE_DIR: '/e' } })).toBe('/e');
    expect(resolveTokenCacheDir({ env: { XDG_CACHE_HOME: '/x' } })).toBe('/x/grassflow/token-ids');
  });
});
