// `grassflow-lm generate --checkpoint URL` in a real process against a server on 127.0.0.1 that stalls: the overall
// deadline (GRASSFLOW_DOWNLOAD_DEADLINE_S), a cache folder under /proc refused at once naming GRASSFLOW_CACHE_DIR, a
// URL's password never printed, and a file: URL read as the folder it names.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createModel,
  initBackend,
  preset,
  savePretrained,
  WIKITEXT_WORDPIECE_PREPARATION,
} from '@grassflow/gpu-layers';
import { cliWhileServing as run, tmp } from './helpers.js';

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'history', 'of'];
while (VOCAB.length < 64) VOCAB.push(`w${VOCAB.length}`);

describe('generate --checkpoint URL: limits a real process keeps', () => {
  const root = tmp();
  const out = join(root, 'export');
  const dataDir = join(root, 'data'); // generate wants a data folder; an export never reads it
  let server: Server;
  let base: string;

  beforeAll(async () => {
    await initBackend({ backend: 'cpu' });
    const model = createModel(preset('tiny'), { seed: 1 });
    await savePretrained(out, model, {
      tokenizer: {
        config: { kind: 'wordpiece', files: { vocab: 'vocab.txt' }, preparation: WIKITEXT_WORDPIECE_PREPARATION },
        files: new Map([['vocab.txt', `${VOCAB.join('\n')}\n`]]),
      },
      card: '# tiny\n',
    });
    model.dispose();
    const files = new Map(readdirSync(out).map((f) => [f, readFileSync(join(out, f))]));
    server = createServer((req, res: ServerResponse) => {
      const [, folder, name = ''] = (req.url ?? '').split('/');
      const body = files.get(name);
      if (folder === 'stall' && name === 'model.safetensors') {
        res.writeHead(200);
        const tick = setInterval(() => res.write('x'), 2000); // 1 byte every 2 s
        res.socket?.once('close', () => clearInterval(tick));
        return;
      }
      if (folder !== 'ok' && folder !== 'stall') res.writeHead(404).end();
      else if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    mkdirSync(dataDir);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  const generate = (checkpoint: string) => [
    'generate',
    '--checkpoint',
    checkpoint,
    '--prompt',
    'the history of',
    '--max-tokens',
    '3',
    '--data-dir',
    dataDir,
  ];

  it('a server sending 1 byte every 2 s is given up at GRASSFLOW_DOWNLOAD_DEADLINE_S, with what to do', async () => {
    const r = await run(generate(`${base}/stall/`), {
      GRASSFLOW_CACHE_DIR: join(root, 'cache-stall'),
      GRASSFLOW_DOWNLOAD_DEADLINE_S: '3',
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/model\.safetensors did not arrive in time .*GRASSFLOW_DOWNLOAD_DEADLINE_S=SECONDS/);
  });

  it('GRASSFLOW_CACHE_DIR under /proc is refused at once, naming GRASSFLOW_CACHE_DIR', async () => {
    const r = await run(generate(`${base}/ok/`), { GRASSFLOW_CACHE_DIR: '/proc/grassflow-x' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/\/proc\/grassflow-x \(from GRASSFLOW_CACHE_DIR\).*proc file system/);
    expect(r.stderr).not.toContain('GRASSFLOW_DATA_DIR');
  });

  it("a URL's password is never printed", async () => {
    const r = await run(generate(`${base.replace('//', '//me:hunter2@')}/missing/`), {
      GRASSFLOW_CACHE_DIR: join(root, 'cache-password'),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('***@127.0.0.1');
    expect(r.stderr).not.toContain('hunter2');
  });

  it('a file: URL is the folder it names, and the served URL gives the same text', async () => {
    const local = await run(generate(pathToFileURL(out).href));
    expect(local.code, local.stderr).toBe(0);
    const served = await run(generate(`${base}/ok`), { GRASSFLOW_CACHE_DIR: join(root, 'cache-ok') });
    expect(served.code, served.stderr).toBe(0);
    expect(served.stdout).toBe(local.stdout);
  });
});
