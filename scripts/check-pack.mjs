#!/usr/bin/env node
// Packs every public package with `pnpm pack`, installs the tarballs into an empty folder outside the
// workspace with plain npm, and imports each package from both ESM and CJS. Proves a user can install
// any @grassflow package on its own. Run after `turbo run build` (the root `pnpm test` does).
// Then, in that install (no workspace patches apply there), @grassflow/gpu-layers' initBackend({ backend: 'wasm' })
// from ESM and from CJS must report every core as wasm threads (at most 8), so more than one on a multi-core
// machine, and the script (which also runs a matMul) must exit by itself; with GRASSFLOW_REQUIRE_BLAS=1 (CI, where
// OpenBLAS is installed) its products must be the native ones (info.blas 'openblas …': koffi came with the install).
// A platform package (package.json with `os`/`cpu`: @grassflow/native-linux-x64) ships a built library instead of
// dist/; with the registry it is not named in the install: gpu-layers' optionalDependencies must bring it, and on
// linux-x64 initBackend({ backend: 'wasm' }) must report the native fused kernels (info.native 'native …').
// The npm install is the install line of gpu-layers' README (its peer dependencies included), the @grassflow names
// replaced by the tarballs. For every package README with a `pnpm add` line, an empty project installs with that
// line exactly as written (pnpm on PATH, its build-script approvals/denials included; the @grassflow tarballs
// through pnpm-workspace.yaml overrides). In the npm install and gpu-layers' pnpm install, gpu-layers' README
// examples "Your own model with CausalGrassmannMixing" and "Saving any tfjs model" run as written (ESM, top-level
// await; the last line printed must be what a trailing `// prints X` says), and a strict TypeScript consumer of the
// README APIs
// (createDecoder((await loadCheckpoint(dir)).model) included) compiles with the workspace's tsc under
// moduleResolution nodenext and bundler, skipLibCheck false: any error in our .d.ts or the consumer fails; errors
// inside tfjs's own .d.ts (which do not pass strict lib checking upstream) are counted and reported, not failed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { findVerdaccio, publishSnapshot, readmeInstallLine, startRegistry } from './local-registry.mjs';

const root = resolve(import.meta.dirname, '..');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const packages = readdirSync(join(root, 'packages'))
  .map((dir) => join(root, 'packages', dir))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);
/** A per-platform package of built native code (the esbuild pattern): no dist/, its library in `files`. */
const isPlatformPackage = (pkg) => Array.isArray(pkg.os) || Array.isArray(pkg.cpu);
const nativeHere = packages.some(({ pkg }) => pkg.name === `@grassflow/native-${process.platform}-${process.arch}`);

/**
 * The examples the pack check runs from the installed tarballs: the first ```ts block under each heading, of the
 * gpu-layers README or of its guide (docs/gpu-layers.md, relative to the package folder).
 */
const EXAMPLE_SECTIONS = [
  ['README.md', '## A layer in your own model'],
  ['README.md', '## Saving and loading a model'],
  ['../../docs/gpu-layers.md', '## Saving any tfjs model'],
];

function readmeExamples(dir) {
  return EXAMPLE_SECTIONS.map(([file, heading]) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const at = text.indexOf(`\n${heading}\n`);
    if (at < 0) throw new Error(`${join(dir, file)} has no section "${heading}"`);
    const block = /\n```ts\n([\s\S]*?)\n```/.exec(text.slice(at));
    if (block === null) throw new Error(`${join(dir, file)}: section "${heading}" has no ts block`);
    return [heading.replace(/^## /, ''), `${block[1]}\n`];
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
  readSafetensorsFile,
  safetensorsHandler,
  saveCheckpoint,
  saveWeights,
  writeSafetensorsFile,
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
  await writeSafetensorsFile(\`\${dir}/t.safetensors\`, { ids: tf.tensor1d([1, 2], 'int32') });
  const read = await readSafetensorsFile(\`\${dir}/t.safetensors\`);
  const config: ModelConfig = preset('tiny');
  const lm = createModel(config, { seed: 0 });
  await saveCheckpoint(\`\${dir}/ckpt\`, lm);
  const decoder = createDecoder((await loadCheckpoint(\`\${dir}/ckpt\`)).model, { batch: 1 });
  const logits: tf.Tensor2D = decoder.step([1]);
  return (info.threads ?? 1) + tensors.size + read.tensors.size + logits.shape[1];
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
try {
  const verdaccio = findVerdaccio();
  if (verdaccio !== undefined) {
    registry = await startRegistry(verdaccio, work);
    const published = publishSnapshot(root, work, registry.url);
    console.log(
      `check-pack: ${published.length} packages published to a local registry (${registry.url}, Verdaccio) as ` +
        `${published[0]?.version} by changeset version --snapshot and changeset publish; installs go by name`,
    );
  } else if (process.env.GRASSFLOW_REQUIRE_REGISTRY === '1') {
    throw new Error(
      'GRASSFLOW_REQUIRE_REGISTRY=1 but no Verdaccio: set GRASSFLOW_VERDACCIO or put verdaccio on PATH ' +
        '(npm install verdaccio@6.8.0 with overrides { "node-fetch": "2.7.0" }, as .ci/run does)',
    );
  } else {
    console.log('check-pack: no Verdaccio here (GRASSFLOW_VERDACCIO, PATH): installing the packed tarballs instead');
  }
  const source = registry === undefined ? 'its tarball' : 'the registry, by name';
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
  const lmTarball = join(
    work,
    run('pnpm', ['pack', '--pack-destination', work], lmTrainer.dir).trim().split('\n').pop().split('/').pop(),
  );
  const app = join(work, 'app');
  run('mkdir', ['-p', app], work);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, version: '0.0.0' }));
  // All tarballs in one install, so inter-package dependencies resolve to the packed versions; the README's npm line
  // gives the rest (the peer dependencies a user imports).
  const gpuLayers = packages.find(({ pkg }) => pkg.name === '@grassflow/gpu-layers');
  const tarballOf = new Map(packages.map(({ pkg }, i) => [pkg.name, tarballs[i]]));
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
      ? [...tarballs, lmTarball, ...npmExtra]
      : [
          '--registry',
          registry.url,
          ...packages.filter(({ pkg }) => !isPlatformPackage(pkg)).map(({ pkg }) => pkg.name),
          lmTrainer.pkg.name,
          ...npmExtra,
        ];
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...npmArgs], app);
  const sizeOf = (dir) => `${run('du', ['-sm', join(dir, 'node_modules')], dir).split('\t')[0]} MB`;
  console.log(`check-pack: npm install of every package and grassflow-lm: node_modules ${sizeOf(app)}`);
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
      // with OpenBLAS on the machine (CI sets GRASSFLOW_REQUIRE_BLAS=1 then), npm users get the native products too
      const nativeWanted = process.env.GRASSFLOW_REQUIRE_BLAS === '1';
      if (nativeWanted && !/^openblas /.test(info.blas ?? '')) {
        console.error(
          `check-pack: @grassflow/gpu-layers (${kind}) from ${source}: the wasm products are not native here ` +
            `although OpenBLAS is installed (blas: ${info.blas})`,
        );
        failed++;
        continue;
      }
      if (nativeHere && !/^native /.test(info.native ?? '')) {
        console.error(
          `check-pack: @grassflow/gpu-layers (${kind}) from ${source}: the fused kernels are not native on ` +
            `${process.platform}-${process.arch} (native: ${info.native})`,
        );
        failed++;
        continue;
      }
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
      execFileSync('sh', ['-c', line], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      console.log(
        `check-pack: ${pkg.name}: the README's pnpm line installs in an empty project (node_modules ` +
          `${sizeOf(project)}): ${pnpmLine}`,
      );
      pnpmInstalls.set(pkg.name, project);
    } catch (err) {
      console.error(
        `check-pack: ${pkg.name}: the README's pnpm line failed in an empty project: ${pnpmLine}\n` +
          `${err.stdout}${err.stderr}`,
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
    }
    for (const [manager, dir] of Object.entries(apps)) {
      for (const [title, code] of examples) {
        checks++;
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
          console.log(`check-pack: gpu-layers README example "${title}" runs as written (${manager} install)`);
        } catch (err) {
          console.error(
            `check-pack: gpu-layers README example "${title}" failed (${manager} install): ` +
              `${err.stderr || err.message}`,
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
