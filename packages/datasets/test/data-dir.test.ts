import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import {
  bertVocabPath,
  DataDirError,
  DatasetError,
  existingDataDir,
  resolveDataDir,
  resolveTokenCacheDir,
  snliPath,
  wikitextPath,
} from '@grassflow/datasets';

describe('data location', () => {
  it('explicit path > GRASSFLOW_DATA_DIR > XDG_CACHE_HOME/grassflow > ~/.cache/grassflow', () => {
    const env = { GRASSFLOW_DATA_DIR: '/srv/data', XDG_CACHE_HOME: '/xdg' };
    expect(resolveDataDir({ dataDir: '/explicit', env })).toBe('/explicit');
    expect(resolveDataDir({ env })).toBe('/srv/data');
    expect(resolveDataDir({ env: { XDG_CACHE_HOME: '/xdg' } })).toBe('/xdg/grassflow');
    expect(resolveDataDir({ env: {} })).toBe(join(homedir(), '.cache', 'grassflow'));
    expect(resolveDataDir({ env: { GRASSFLOW_DATA_DIR: 'rel/dir' } })).toBe(resolve('rel/dir'));
    expect(resolveDataDir({ env: { XDG_CACHE_HOME: '' } })).toBe(join(homedir(), '.cache', 'grassflow'));
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

describe('existingDataDir', () => {
  it('returns the resolved folder when it exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'grassflow-dd-'));
    try {
      expect(existingDataDir(dir, 'x')).toBe(resolve(dir));
      expect(existingDataDir(undefined, 'x', { GRASSFLOW_DATA_DIR: dir })).toBe(resolve(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the missing folder, where its path came from, and what it should hold', () => {
    expect(() => existingDataDir('/nonexistent/gf', 'snli/*.jsonl')).toThrow(DataDirError);
    expect(() => existingDataDir('/nonexistent/gf', 'snli/*.jsonl')).toThrow(
      'data folder /nonexistent/gf (from --data-dir) does not exist. Pass --data-dir DIR or set GRASSFLOW_DATA_DIR to a folder with snli/*.jsonl.',
    );
    expect(() => existingDataDir(undefined, 'v', { GRASSFLOW_DATA_DIR: '/nonexistent/env' })).toThrow(
      '(from GRASSFLOW_DATA_DIR)',
    );
    expect(() => existingDataDir(undefined, 'v', { XDG_CACHE_HOME: '/nonexistent/xdg' })).toThrow(
      'data folder /nonexistent/xdg/grassflow (from the default cache folder)',
    );
  });
});
