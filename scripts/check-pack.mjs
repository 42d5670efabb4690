#!/usr/bin/env node
// Packs every public package with `pnpm pack`, installs the tarballs into an empty folder outside the
// workspace with plain npm, and imports each package from both ESM and CJS. Proves a user can install
// any @grassflow package on its own. Run after `turbo run build` (the root `pnpm test` does).
// Then, in that install (no workspace patches apply there), @grassflow/gpu-layers' initBackend({ backend: 'wasm' })
// from ESM and from CJS must report every core as wasm threads (at most 8), so more than one on a multi-core
// machine, and the script (which also runs a matMul) must exit by itself. A platform package (package.json with `os`/`cpu`:
// @grassflow/native-linux-x64) ships a built library instead of dist/; with the registry it is not named in the
// install: gpu-layers' optionalDependencies must bring it, and on linux-x64 once koffi is installed
// initBackend({ backend: 'wasm' }) must report the native fused kernels (info.native 'native …').
// The npm install is the install line of gpu-layers' README (its peer dependencies included), the @grassflow names
// replaced by the tarballs; it must print no EBADENGINE warning, and every package it installs must declare engines
// that admit the lowest Node the workspace supports (package.json's engines). koffi (the FFI of the native products)
// is an optional peer dependency: without it initBackend's info.blas names the line that installs it, and after that
// line (npm, and pnpm with its build script denied: its prebuilt binary needs none) the products are native wherever
// OpenBLAS is installed (info.blas 'openblas …'; with GRASSFLOW_REQUIRE_BLAS=1, as in CI, they must be). grassflow-lm installs without the Redis queue stack, and its worker says what to install.
// For every package README with a `pnpm add` line, an empty project installs with that line exactly as written (pnpm on PATH; no flag: pnpm 10 and later refuse an install with unapproved build scripts,
// so the line must need none; the @grassflow tarballs through pnpm-workspace.yaml overrides), as does
// `pnpm add @grassflow/lm-trainer`. A trained model (models/*) is published with the packages; its tarball must hold
// every file its config.json records. In the npm install and gpu-layers' pnpm install, the examples of EXAMPLE_SECTIONS
// run as written (ESM, top-level await; the last line printed must be what a trailing `// prints X` says): the
// repository README's "Try a trained model" (fromPretrained of the model package by its name; the pnpm project adds
// it by name first), gpu-layers' README and guide sections; and a strict TypeScript consumer of the README APIs
// (createDecoder((await loadCheckpoint(dir)).model) included) compiles with the workspace's tsc under
// moduleResolution nodenext and bundler, skipLibCheck false: any error in our .d.ts or the consumer fails; errors
// inside tfjs's own .d.ts (which do not pass strict lib checking upstream) are counted and reported, not failed.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import ts from 'typescript';
import { findVerdaccio, publishWorkspace, readmeInstallLine, startRegistry } from './local-registry.mjs';

const root = resolve(import.meta.dirname, '..');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
/** stdout and stderr of a command that must succeed, together (install warnings go to stderr). */
const runAll = (cmd, args, cwd, shell = false) => {
  const r = spawnSync(shell ? 'sh' : cmd, shell ? ['-c', cmd] : args, { cwd, encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status !== 0)
    throw Object.assign(new Error(`${cmd} ${args.join(' ')} exited ${r.status}`), {
      stdout: r.stdout,
      stderr: r.stderr,
    });
  return out;
};
// npm's own semver (npm is on PATH wherever this runs): the engines ranges are compared as npm compares them
const npmRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
const semver = createRequire(join(npmRoot, 'npm', 'package.json'))('semver');
const lowestNode = semver.minVersion(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node).version;

/** Installed packages (name@version) whose engines.node does not admit `node`, under a node_modules folder. */
function enginesRefusing(modules, node) {
  const out = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(path);
        continue;
      }
      const manifest = join(path, 'package.json');
      if (existsSync(manifest)) {
        const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
        const range = pkg.engines?.node;
        if (typeof range === 'string' && semver.validRange(range) && !semver.satisfies(node, range)) {
          out.push(`${pkg.name}@${pkg.version} (node ${range})`);
        }
      }
      if (existsSync(join(path, 'node_modules'))) visit(join(path, 'node_modules'));
    }
  };
  visit(modules);
  return [...new Set(out)].sort();
}

/** One field of initBackend({ backend: 'wasm', threads: 1 })'s info in the install at dir ('blas', 'native'). */
function backendInfoOf(dir, field) {
  const script =
    "import { initBackend } from '@grassflow/gpu-layers'; " +
    `const info = await initBackend({ backend: 'wasm', threads: 1 }); console.log(JSON.stringify(info.${field}));`;
  const out = execFileSync('node', ['--input-type=module', '-e', script], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GRASSFLOW_BACKEND: '', GRASSFLOW_BLAS: '', GRASSFLOW_NATIVE: '' },
  });
  return JSON.parse(out.trim().split('\n').pop());
}
const blasOf = (dir) => backendInfoOf(dir, 'blas');
/**
 * Whether info.blas is what an install with koffi should give: native products ('openblas …'); where OpenBLAS is not
 * on the machine (and CI's GRASSFLOW_REQUIRE_BLAS=1 does not say it is), koffi loaded and OpenBLAS named as missing.
 */
function nativeProductsOk(blas) {
  if (/^openblas /.test(blas)) return true;
  return process.env.GRASSFLOW_REQUIRE_BLAS !== '1' && !/koffi/.test(blas) && /libopenblas/.test(blas);
}
const KOFFI_NPM = 'npm install koffi@3.3.4';
const KOFFI_PNPM = "pnpm add koffi@3.3.4 '--allow-build=!koffi'";
const QUEUE_INSTALL = 'npm install bullmq@6.7.0 ioredis@5.11.1';

const packages = readdirSync(join(root, 'packages'))
  .map((dir) => join(root, 'packages', dir))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);
/** Trained models published as packages (models/*): the files of a pretrained folder, no code. */
const models = readdirSync(join(root, 'models'))
  .map((dir) => join(root, 'models', dir))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }));
/** A per-platform package of built native code (the esbuild pattern): no dist/, its library in `files`. */
const isPlatformPackage = (pkg) => Array.isArray(pkg.os) || Array.isArray(pkg.cpu);
const nativeHere = packages.some(({ pkg }) => pkg.name === `@grassflow/native-${process.platform}-${process.arch}`);

/**
 * The examples the pack check runs from the installed packages: the first ```ts block under each heading, of the
 * gpu-layers README, of its guide (docs/gpu-layers.md) or of the repository's README (paths relative to the package
 * folder). A section's `npm install` line before its block names the packages it needs (the trained model's).
 */
const EXAMPLE_SECTIONS = [
  ['../../README.md', '## Try a trained model'],
  ['README.md', '## A layer in your own model'],
  ['README.md', '## Saving and loading a model'],
  ['../../docs/gpu-layers.md', '## Saving any tfjs model'],
];

/** [title, code, the @grassflow packages the section's install line names] of each of EXAMPLE_SECTIONS. */
function readmeExamples(dir) {
  return EXAMPLE_SECTIONS.map(([file, heading]) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const at = text.indexOf(`\n${heading}\n`);
    if (at < 0) throw new Error(`${join(dir, file)} has no section "${heading}"`);
    const section = text.slice(at);
    const block = /\n```ts\n([\s\S]*?)\n```/.exec(section);
    if (block === null) throw new Error(`${join(dir, file)}: section "${heading}" has no ts block`);
    const install = /\nnpm install ([^\n]*)/.exec(section.slice(0, block.index))?.[1] ?? '';
    const needs = install.split(/\s+/).filter((name) => name.startsWith('@grassflow/'));
    const page = file === 'README.md' ? "gpu-layers' README" : file.replace(/^\.\.\/\.\.\//, '');
    return [`${page}, "${heading.replace(/^## /, '')}"`, `${block[1]}\n`, needs];
  });
}

/** A strict TypeScript user of the README APIs (type-checked only, never run). */
const TS_CONSUMER = `import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import {
  assignWeights,
  CausalGrassmannMixing,
  createDecoder,
  createModel,
  initBackend,
  loadCheckpoint,
  loadWeights,
  preset,
  safetensorsHandler,
  saveCheckpoint,
  saveWeights,
  type BackendInfo,
  type ModelConfig,
} from '@grassflow/gpu-layers';

export async function main(dir: string): Promise<number> {
  const info: BackendInfo = await initBackend({ backend: 'wasm' });
  const model = tfl.sequential({
    layers: [
      tfl.layers.dense({ units: 32, inputShape: [20, 8] }),
      new CausalGrassmannMixing({ r: 8, offsets: [1, 2, 4], name: 'mix', trainable: true }),
      tfl.layers.dense({ units: 1 }),
    ],
  });
  model.compile({ optimizer: tf.train.adam(1e-2), loss: 'meanSquaredError' });
  await model.save(safetensorsHandler(\`\${dir}/model\`));
  const again: tfl.LayersModel = await tfl.loadLayersModel(safetensorsHandler(\`\${dir}/model\`));
  await saveWeights(\`\${dir}/w.safetensors\`, again);
  const { tensors } = await loadWeights(\`\${dir}/w.safetensors\`);
  assignWeights(again, tensors);
  const config: ModelConfig = preset('tiny');
  const lm = createModel(config, { seed: 0 });
  await saveCheckpoint(\`\${dir}/ckpt\`, lm);
  const decoder = createDecoder((await loadCheckpoint(\`\${dir}/ckpt\`)).model, { batch: 1 });
  const logits: tf.Tensor2D = decoder.step([1]);
  return (info.threads ?? 1) + tensors.size + logits.shape[1];
}
`;

/** tsup's declaration chunks: `<name>-<8 characters>.d.ts`, imported as `./<name>-<hash>.js`. */
const HASHED_CHUNK = /-[A-Za-z0-9_]{8}\.d\.c?ts$/;
const HASHED_IMPORT = /from '\.\/[^']*-[A-Za-z0-9_]{8}\.c?js'/;
/** `import { B as BackendInfo }`: a declaration exported under a minified name. */
const MINIFIED_ALIAS = /(?:import|export) \{[^}]*\b[\w$]{1,2} as [\w$]{3,}/;

const lmTrainer = { dir: join(root, 'apps', 'lm-trainer') };
lmTrainer.pkg = JSON.parse(readFileSync(join(lmTrainer.dir, 'package.json'), 'utf8'));

const work = mkdtempSync(join(tmpdir(), 'grassflow-pack-'));
let failed = 0;
let checks = packages.length * 2;
let registry;
/** What publishWorkspace published: name, version, and the range a consumer installs it by. */
let published = [];
try {
  const verdaccio = findVerdaccio();
  if (verdaccio !== undefined) {
    registry = await startRegistry(verdaccio, work);
    published = publishWorkspace(root, work, registry.url);
    const unversioned = published.filter(({ version }) => version === '0.0.0');
    if (unversioned.length > 0) {
      throw new Error(
        `${unversioned.map(({ name, version }) => `${name} ${version}`).join(', ')}: not a release version; ` +
          'run `pnpm version-packages` (changeset version) first',
      );
    }
    console.log(
      `check-pack: ${published.length} packages published to a local registry (${registry.url}, Verdaccio) by ` +
        `changeset publish: ${published.map(({ name, version }) => `${name} ${version}`).join(', ')}; ` +
        'installs go by version range',
    );
  } else if (process.env.GRASSFLOW_REQUIRE_REGISTRY === '1') {
    throw new Error(
      'GRASSFLOW_REQUIRE_REGISTRY=1 but no Verdaccio: set GRASSFLOW_VERDACCIO or put verdaccio on PATH ' +
        '(npm install verdaccio@6.8.0 with overrides { "node-fetch": "2.7.0" }, as .ci/run does)',
    );
  } else {
    console.log('check-pack: no Verdaccio here (GRASSFLOW_VERDACCIO, PATH): installing the packed tarballs instead');
  }
  const source = registry === undefined ? 'its tarball' : 'the registry, by a version range';
  const tarballs = [];
  for (const { dir, pkg } of packages) {
    const platform = isPlatformPackage(pkg);
    const built = platform ? (pkg.files ?? []).filter((f) => /\.(so|dylib|dll|node)$/.test(f)) : ['dist'];
    for (const f of built)
      if (!existsSync(join(dir, f))) throw new Error(`${pkg.name}: no ${f} — run \`pnpm build\` first`);
    const out = run('pnpm', ['pack', '--pack-destination', work], dir).trim().split('\n').pop();
    const tarball = out.endsWith('.tgz')
      ? resolve(dir, out)
      : join(
          work,
          readdirSync(work).find((f) => f.endsWith('.tgz') && !tarballs.includes(join(work, f))),
        );
    tarballs.push(tarball);
    const listing = run('tar', ['-tzf', tarball], work);
    // readable declarations (tooling/dts.mjs): no hashed chunk files, no one-letter aliases of real names
    for (const file of listing.split('\n').filter((f) => /\.d\.c?ts$/.test(f))) {
      const text = run('tar', ['-xzOf', tarball, file], work);
      const hashed = HASHED_CHUNK.test(file) || HASHED_IMPORT.test(text);
      const aliased = MINIFIED_ALIAS.exec(text);
      if (hashed || aliased !== null) {
        console.error(
          `check-pack: ${pkg.name}: ${file.replace('package/', '')} ` +
            (hashed ? 'is or imports a hashed chunk' : `exports a minified alias (${aliased[0]})`),
        );
        failed++;
      }
    }
    const shipped = platform
      ? built.map((f) => `package/${f}`)
      : ['package/dist/index.js', 'package/dist/index.cjs', 'package/dist/index.d.ts'];
    for (const required of ['package/package.json', 'package/README.md', 'package/LICENSE', ...shipped]) {
      if (!listing.split('\n').includes(required)) {
        console.error(`check-pack: ${pkg.name}: tarball lacks ${required.replace('package/', '')}`);
        failed++;
      }
    }
  }
  const packInto = (dir) =>
    join(work, run('pnpm', ['pack', '--pack-destination', work], dir).trim().split('\n').pop().split('/').pop());
  const lmTarball = packInto(lmTrainer.dir);
  // a model package (models/*): its tarball holds every file its config.json records, and config.json itself
  const modelTarballs = new Map();
  for (const { dir, pkg } of models) {
    checks++;
    const tarball = packInto(dir);
    modelTarballs.set(pkg.name, tarball);
    const listing = run('tar', ['-tzf', tarball], work).split('\n');
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    const recorded = [
      'config.json',
      ...Object.keys(config.files ?? {}),
      ...Object.keys(config.extra?.pretrained?.files ?? {}),
    ];
    const lacking = recorded.filter((f) => !listing.includes(`package/${f}`));
    if (lacking.length > 0) {
      console.error(`check-pack: ${pkg.name}: tarball lacks ${lacking.join(', ')} (package.json's files)`);
      failed++;
    } else {
      console.log(`check-pack: ${pkg.name}: the tarball holds the ${recorded.length} files its config.json records`);
    }
  }
  const app = join(work, 'app');
  run('mkdir', ['-p', app], work);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, version: '0.0.0' }));
  // All tarballs in one install, so inter-package dependencies resolve to the packed versions; the README's npm line
  // gives the rest (the peer dependencies a user imports).
  const gpuLayers = packages.find(({ pkg }) => pkg.name === '@grassflow/gpu-layers');
  const tarballOf = new Map([...packages.map(({ pkg }, i) => [pkg.name, tarballs[i]]), ...modelTarballs]);
  const npmLine = gpuLayers ? readmeInstallLine(gpuLayers.dir, 'npm install') : undefined;
  if (gpuLayers && npmLine === undefined) throw new Error("gpu-layers' README has no `npm install` line");
  const npmExtra = npmLine
    ? npmLine
        .split(/\s+/)
        .slice(2)
        .filter((a) => !a.startsWith('@grassflow/'))
    : [];
  const npmArgs =
    registry === undefined
      ? [...tarballs, ...modelTarballs.values(), lmTarball, ...npmExtra]
      : [
          '--registry',
          registry.url,
          ...published
            .filter(({ name }) => !packages.some(({ pkg }) => pkg.name === name && isPlatformPackage(pkg)))
            .map(({ name, range }) => `${name}@${range}`),
          ...npmExtra,
        ];
  const npmStarted = Date.now();
  const npmOut = runAll('npm', ['install', '--no-audit', '--no-fund', '--loglevel=warn', ...npmArgs], app);
  const npmSeconds = ((Date.now() - npmStarted) / 1000).toFixed(0);
  const sizeOf = (dir) => `${run('du', ['-sm', join(dir, 'node_modules')], dir).split('\t')[0]} MB`;
  console.log(
    `check-pack: npm install of every package and grassflow-lm (no flag): node_modules ${sizeOf(app)}, ${npmSeconds} s`,
  );
  checks += 2;
  const badEngine = npmOut.split('\n').filter((l) => /EBADENGINE/.test(l));
  if (badEngine.length > 0) {
    console.error(
      `check-pack: the npm install warns about engines on Node ${process.version}:\n${badEngine.join('\n')}`,
    );
    failed++;
  }
  const refusing = enginesRefusing(join(app, 'node_modules'), lowestNode);
  if (refusing.length > 0) {
    console.error(
      `check-pack: installed packages whose engines refuse Node ${lowestNode}, the lowest the workspace declares: ` +
        refusing.join(', '),
    );
    failed++;
  } else {
    console.log(`check-pack: every package the npm install brings admits Node ${lowestNode} (engines), no EBADENGINE`);
  }
  for (const absent of ['koffi', 'bullmq', 'ioredis']) {
    checks++;
    if (existsSync(join(app, 'node_modules', absent))) {
      console.error(`check-pack: the npm install brought ${absent}, an optional peer dependency`);
      failed++;
    }
  }
  for (const { pkg } of packages) {
    const esm = run(
      'node',
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pkg.name)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== 'default').sort()));`,
      ],
      app,
    );
    const cjs = run(
      'node',
      ['-e', `const m = require(${JSON.stringify(pkg.name)}); console.log(JSON.stringify(Object.keys(m).sort()));`],
      app,
    );
    const esmKeys = JSON.parse(esm.trim().split('\n').pop());
    const cjsKeys = JSON.parse(cjs.trim().split('\n').pop());
    const same = JSON.stringify(esmKeys) === JSON.stringify(cjsKeys);
    if (esmKeys.length === 0 || !same) {
      console.error(
        `check-pack: ${pkg.name}: ESM exports ${esmKeys.length}, CJS exports ${cjsKeys.length}${same ? '' : ' (they differ)'}`,
      );
      failed++;
    } else {
      console.log(`check-pack: ${pkg.name} installs from ${source}; ESM and CJS both export ${esmKeys.length} names`);
    }
  }
  if (packages.some(({ pkg }) => pkg.name === '@grassflow/gpu-layers')) {
    const body =
      "const info = await initBackend({ backend: 'wasm' }); const a = tf.randomNormal([256, 256]); " +
      'const sum = tf.sum(tf.matMul(a, a)).dataSync()[0]; ' +
      'console.log(JSON.stringify({ threads: info.threads, note: info.threadsNote, blas: info.blas, native: info.native, ' +
      'finite: Number.isFinite(sum) }));';
    const scripts = {
      ESM: [
        '--input-type=module',
        '-e',
        `import { initBackend } from '@grassflow/gpu-layers'; import * as tf from '@tensorflow/tfjs-core'; ${body}`,
      ],
      CJS: [
        '-e',
        `const { initBackend } = require('@grassflow/gpu-layers'); const tf = require('@tensorflow/tfjs-core'); ` +
          `(async () => { ${body} })();`,
      ],
    };
    const want = Math.min(cpus().length, 8);
    for (const [kind, args] of Object.entries(scripts)) {
      let out;
      try {
        // A worker left holding the process open would never exit: the timeout makes that a failure.
        out = execFileSync('node', args, {
          cwd: app,
          encoding: 'utf8',
          timeout: 120_000,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, GRASSFLOW_BACKEND: '', GRASSFLOW_WASM_THREADS: '' },
        });
      } catch (err) {
        const why = err.code === 'ETIMEDOUT' ? 'did not exit within 120 s' : `failed: ${err.stderr || err.message}`;
        console.error(`check-pack: @grassflow/gpu-layers (${kind}): a script running initBackend and a matMul ${why}`);
        failed++;
        continue;
      }
      const info = JSON.parse(out.trim().split('\n').pop());
      if (info.threads !== want || !info.finite || (cpus().length > 1 && !(info.threads > 1))) {
        console.error(
          `check-pack: @grassflow/gpu-layers (${kind}): initBackend({ backend: 'wasm' }) reports ${info.threads} ` +
            `wasm threads on ${cpus().length} cores (want ${want}${info.note ? `; ${info.note}` : ''})` +
            (info.finite ? '' : ', and its matMul gave a non-finite sum'),
        );
        failed++;
      } else {
        console.log(
          `check-pack: @grassflow/gpu-layers (${kind}) from ${source}: initBackend({ backend: 'wasm' }) runs ` +
            `${info.threads} wasm threads on ${cpus().length} cores (products: ${info.blas}; fused kernels: ` +
            `${info.native}), and the script exits by itself`,
        );
      }
    }
    checks += 2;
    // without koffi: XNNPACK products, and the note names the line; after that line, native ones where OpenBLAS is
    checks += 2;
    const without = blasOf(app);
    if (!without.includes(KOFFI_NPM) || !without.includes(KOFFI_PNPM)) {
      console.error(`check-pack: without koffi, info.blas does not say how to install it: ${without}`);
      failed++;
    } else {
      console.log(`check-pack: without koffi (not installed by default), info.blas says: ${without}`);
    }
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        'koffi@3.3.4',
        ...(registry ? ['--registry', registry.url] : []),
      ],
      app,
    );
    const withKoffi = blasOf(app);
    if (!nativeProductsOk(withKoffi)) {
      console.error(`check-pack: after \`${KOFFI_NPM}\` the products are not native (blas: ${withKoffi})`);
      failed++;
    } else {
      console.log(`check-pack: after \`${KOFFI_NPM}\` (npm install): blas ${withKoffi}`);
    }
    if (nativeHere) {
      // the platform package came with gpu-layers (optionalDependencies); with koffi its kernels load
      checks++;
      const native = backendInfoOf(app, 'native');
      if (!/^native /.test(native ?? '')) {
        console.error(`check-pack: after \`${KOFFI_NPM}\` the fused kernels are not native here (native: ${native})`);
        failed++;
      } else {
        console.log(`check-pack: after \`${KOFFI_NPM}\`: fused kernels ${native}`);
      }
    }
  }
  // the Redis queue stack is not installed: the worker says what to install, before anything else
  {
    checks++;
    const r = spawnSync('npx', ['--no-install', 'grassflow-lm', 'worker', '--queue', 'redis://127.0.0.1:9/0'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status === 2 && r.stderr.includes(QUEUE_INSTALL) && r.stderr.trim().split('\n').length === 1) {
      console.log(`check-pack: grassflow-lm worker without bullmq/ioredis says: ${r.stderr.trim()}`);
    } else {
      console.error(
        `check-pack: grassflow-lm worker without the queue stack: exit ${r.status}: ${r.stderr}${r.stdout}`,
      );
      failed++;
    }
  }
  // the heavy backends are optional peer dependencies, absent from this install: asked for, each names what to install
  for (const [what, code, want] of [
    [
      "gpu-layers' webgpu backend",
      "const { initBackend } = await import('@grassflow/gpu-layers'); await initBackend({ backend: 'webgpu' });",
      'npm install webgpu@0.6.2 @tensorflow/tfjs-backend-webgpu@4.22.0',
    ],
    [
      "gpu-layers' tensorflow backend",
      "const { initBackend } = await import('@grassflow/gpu-layers'); await initBackend({ backend: 'tensorflow' });",
      'npm install @tensorflow/tfjs-node@4.22.0',
    ],
    [
      "grassmann-math's gpu.js kernels",
      "const { loadGpuJs } = await import('@grassflow/grassmann-math'); await loadGpuJs();",
      'npm install gpu.js@2.24.1',
    ],
  ]) {
    checks++;
    const script = `try { ${code} console.log('loaded'); } catch (err) { console.log(err.message); }`;
    const out = run('node', ['--input-type=module', '-e', script], app).trim().split('\n').pop();
    if (out.includes(want)) {
      console.log(`check-pack: ${what}, not installed, says what to install: ${out}`);
    } else {
      console.error(`check-pack: ${what}: asked for without its optional peer dependency, it said: ${out}`);
      failed++;
    }
  }
  // grassflow-lm, installed beside the packages: its bin through npx, then a tiny train on the data it is given
  for (const [what, args] of [
    ['--help', ['--help']],
    [
      'a tiny train',
      ['train', '--model', 'grassmann', '--preset', 'tiny', '--batch', '4', '--steps', '2', '--eval-tokens', '64'],
    ],
  ]) {
    checks++;
    const out = args[0] === 'train' ? ['--quiet', '--out', join(work, 'lm-run')] : [];
    try {
      const printed = execFileSync('npx', ['--no-install', 'grassflow-lm', ...args, ...out], {
        cwd: app,
        encoding: 'utf8',
        timeout: 300_000,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, GRASSFLOW_BACKEND: '' },
      });
      if (args[0] === 'train' && !existsSync(join(work, 'lm-run', 'checkpoints', 'latest'))) {
        throw new Error(`it wrote no checkpoint: ${printed}`);
      }
      console.log(`check-pack: npx grassflow-lm ${what} works from the package installed from ${source}`);
    } catch (err) {
      console.error(`check-pack: npx grassflow-lm ${what} failed: ${err.stderr || err.message}`);
      failed++;
    }
  }
  // pnpm: for each package whose README has a `pnpm add` line, an empty project where that line runs in the shell
  // as written (its build-script approvals or denials included), @grassflow/* names → tarballs (pnpm overrides).
  const pnpmInstalls = new Map();
  for (const { dir, pkg } of packages) {
    const pnpmLine = readmeInstallLine(dir, 'pnpm add');
    if (pnpmLine === undefined) continue;
    const project = join(work, `pnpm-${pkg.name.replace('@grassflow/', '')}`);
    run('mkdir', ['-p', project], work);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pnpm-check', private: true }));
    if (registry === undefined) {
      writeFileSync(
        join(project, 'pnpm-workspace.yaml'),
        `overrides:\n${[...tarballOf].map(([name, t]) => `  '${name}': 'file:${t}'\n`).join('')}`,
      );
    } else {
      writeFileSync(join(project, '.npmrc'), `registry=${registry.url}\n`); // a user's registry setting, no overrides
    }
    checks++;
    try {
      const line =
        registry === undefined
          ? pnpmLine.replace(/@grassflow\/[\w-]+(?=\s|$)/g, (name) => tarballOf.get(name) ?? name)
          : pnpmLine;
      if (/\s'?--?[\w-]/.test(pnpmLine)) throw new Error(`the README's line passes a flag: ${pnpmLine}`);
      const out = runAll(line, [], project, true);
      const engine = out.split('\n').filter((l) => /Unsupported engine|EBADENGINE/.test(l));
      if (engine.length > 0) throw new Error(`engine warnings:\n${engine.join('\n')}`);
      console.log(
        `check-pack: ${pkg.name}: the README's pnpm line installs in an empty project (node_modules ` +
          `${sizeOf(project)}): ${pnpmLine}`,
      );
      pnpmInstalls.set(pkg.name, project);
    } catch (err) {
      console.error(
        `check-pack: ${pkg.name}: the README's pnpm line failed in an empty project: ${pnpmLine}\n` +
          `${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`,
      );
      failed++;
    }
  }
  // grassflow-lm with plain pnpm: no flag, no build script to approve (the queue stack, whose msgpackr-extract has
  // one, is not installed)
  {
    checks++;
    const project = join(work, 'pnpm-lm-trainer');
    run('mkdir', ['-p', project], work);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pnpm-check', private: true }));
    if (registry === undefined) {
      const all = [...tarballOf, [lmTrainer.pkg.name, lmTarball]];
      writeFileSync(
        join(project, 'pnpm-workspace.yaml'),
        `overrides:\n${all.map(([name, t]) => `  '${name}': 'file:${t}'\n`).join('')}`,
      );
    } else {
      writeFileSync(join(project, '.npmrc'), `registry=${registry.url}\n`);
    }
    const line = `pnpm add ${registry === undefined ? lmTarball : lmTrainer.pkg.name}`;
    try {
      const started = Date.now();
      const out = runAll(line, [], project, true);
      const engine = out.split('\n').filter((l) => /Unsupported engine|EBADENGINE/.test(l));
      if (engine.length > 0) throw new Error(`engine warnings:\n${engine.join('\n')}`);
      const help = runAll('pnpm', ['exec', 'grassflow-lm', '--help'], project);
      if (!help.includes('grassflow-lm')) throw new Error(`grassflow-lm --help printed: ${help}`);
      console.log(
        `check-pack: pnpm add @grassflow/lm-trainer (no flag) installs in an empty project (node_modules ` +
          `${sizeOf(project)}, ${((Date.now() - started) / 1000).toFixed(0)} s) and pnpm exec grassflow-lm --help runs`,
      );
    } catch (err) {
      console.error(
        `check-pack: pnpm add @grassflow/lm-trainer failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`,
      );
      failed++;
    }
  }
  if (gpuLayers) {
    const examples = readmeExamples(gpuLayers.dir);
    const apps = { npm: app };
    const pnpmApp = pnpmInstalls.get('@grassflow/gpu-layers');
    if (pnpmApp === undefined) {
      console.error("check-pack: @grassflow/gpu-layers: its README's pnpm line did not install, or it has none");
      failed++;
    } else {
      apps.pnpm = pnpmApp;
      // the note's pnpm line: koffi's build script denied, its prebuilt binary used as it is
      checks++;
      try {
        runAll(KOFFI_PNPM, [], pnpmApp, true);
        const blas = blasOf(pnpmApp);
        if (!nativeProductsOk(blas)) throw new Error(`the products are not native (blas: ${blas})`);
        console.log(`check-pack: after \`${KOFFI_PNPM}\` (no build script run): blas ${blas}`);
      } catch (err) {
        console.error(`check-pack: ${KOFFI_PNPM}: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        failed++;
      }
    }
    for (const [manager, dir] of Object.entries(apps)) {
      for (const [title, code, needs] of examples) {
        checks++;
        // the npm install has every package; the pnpm project gets what the section's install line adds, by name
        const missing = needs.filter((name) => !existsSync(join(dir, 'node_modules', name)));
        if (missing.length > 0) {
          try {
            runAll('pnpm', ['add', ...missing.map((name) => tarballOf.get(name) ?? name)], dir);
          } catch (err) {
            console.error(`check-pack: pnpm add ${missing.join(' ')} failed: ${err.stderr || err.message}`);
            failed++;
            continue;
          }
        }
        // the blocks are TypeScript (they compile under strict: examples/test): types stripped, run as the ESM a user's
        // build would produce
        const js = ts.transpileModule(code, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText;
        writeFileSync(join(dir, 'example.mjs'), js);
        try {
          const out = execFileSync('node', ['example.mjs'], {
            cwd: dir,
            encoding: 'utf8',
            timeout: 300_000,
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, GRASSFLOW_BACKEND: '', GRASSFLOW_WASM_THREADS: '' },
          });
          const want = /\/\/ prints (\S+)\s*$/.exec(code.trim())?.[1];
          const last = out.trim().split('\n').pop();
          if (want !== undefined && last !== want) throw new Error(`it printed ${last}, the README says ${want}`);
          console.log(`check-pack: the example of ${title} runs as written (${manager} install)`);
        } catch (err) {
          console.error(
            `check-pack: the example of ${title} failed (${manager} install): ` + `${err.stderr || err.message}`,
          );
          failed++;
        }
      }
      writeFileSync(join(dir, 'consumer.mts'), TS_CONSUMER);
      for (const resolution of ['nodenext', 'bundler']) {
        checks++;
        const config = {
          compilerOptions: {
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            target: 'es2022',
            module: resolution === 'nodenext' ? 'nodenext' : 'esnext',
            moduleResolution: resolution,
            types: [],
          },
          files: ['consumer.mts'],
        };
        writeFileSync(join(dir, `tsconfig.${resolution}.json`), JSON.stringify(config, null, 2));
        let out = '';
        try {
          out = run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', `tsconfig.${resolution}.json`], dir);
        } catch (err) {
          out = `${err.stdout}${err.stderr}`;
        }
        const errors = out.split('\n').filter((l) => /error TS\d+/.test(l));
        const ours = errors.filter((l) => !/node_modules\/(\.pnpm\/)?@tensorflow[+/]/.test(l));
        if (ours.length > 0) {
          console.error(
            `check-pack: the strict TS consumer fails under ${resolution} (${manager} install):\n${ours.join('\n')}`,
          );
          failed++;
        } else {
          console.log(
            `check-pack: a strict TS consumer of the README APIs compiles under moduleResolution ${resolution} ` +
              `(${manager} install; skipLibCheck false: our .d.ts clean, ` +
              `${errors.length} errors inside tfjs's own .d.ts)`,
          );
        }
      }
    }
  }
} finally {
  registry?.stop();
  rmSync(work, { recursive: true, force: true });
}
const passed = checks - failed;
console.log(`check-pack: ${Math.max(passed, 0)} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
