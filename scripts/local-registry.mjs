// A real npm registry on 127.0.0.1 (Verdaccio) with this workspace's packages published to it the way a release
// publishes them: the versions `changeset version` wrote (snapshots only in pre-release mode), `workspace:` ranges
// replaced by those versions (what `pnpm publish` does inside a workspace), then `changeset publish`. Packages not ours are proxied
// from the registry npm is configured with. Used by check-pack.mjs, so that installs go by name, with no overrides.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The Verdaccio executable: $GRASSFLOW_VERDACCIO, else `verdaccio` on PATH; undefined when there is none
 * (.ci/run installs 6.8.0, the last release that runs on Node 20, with `node-fetch` pinned to 2.7.0).
 */
export function findVerdaccio() {
  const given = process.env.GRASSFLOW_VERDACCIO;
  if (given) return given;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'verdaccio'))) return join(dir, 'verdaccio');
  }
  return undefined;
}

async function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Starts Verdaccio with its storage under `work`; resolves once it answers /-/ping (at most 60 s). */
export async function startRegistry(verdaccio, work) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const storage = join(work, 'registry-storage');
  mkdirSync(storage, { recursive: true });
  const upstream = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  const config = join(work, 'verdaccio.yaml');
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(storage)}`,
      'uplinks:',
      `  upstream: { url: ${JSON.stringify(upstream)}, timeout: 60s }`,
      'packages:',
      "  '@grassflow/*': { access: $all, publish: $all }", // ours: never looked up upstream
      "  '**': { access: $all, proxy: upstream }",
      'max_body_size: 500mb',
      'log: { type: stdout, format: pretty, level: error }',
      '',
    ].join('\n'),
  );
  const child = spawn(verdaccio, ['--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (b) => (output += b));
  child.stderr.on('data', (b) => (output += b));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  for (let waited = 0; waited < 60_000; waited += 250) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) return { url, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  stop();
  throw new Error(`verdaccio did not answer on ${url} within 60 s:\n${output}`);
}

/** The workspace's package folders (packages/*, apps/*, models/*) with their package.json. */
function workspacePackages(root) {
  return ['packages', 'apps', 'models'].flatMap((group) =>
    readdirSync(join(root, group))
      .map((d) => join(root, group, d))
      .filter((d) => existsSync(join(d, 'package.json')))
      .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) })),
  );
}

/**
 * Copies the workspace (without node_modules, caches, runs and git) to `work/release` and publishes every public
 * package to `url` with `changeset publish`, at the version its package.json gives (what `changeset version` made
 * it), `workspace:` ranges replaced as `pnpm publish` replaces them (`workspace:*` by the version, `workspace:^` by
 * `^version`). In pre-release mode (`.changeset/pre.json`) the versions are snapshots of `changeset version
 * --snapshot registry-check` instead. The working tree is not touched. Returns the published names, their version
 * and the range a consumer installs them by (`^0.1.0`; a pre-release's exact version).
 */
export function publishWorkspace(root, work, url) {
  const copy = join(work, 'release');
  mkdirSync(copy, { recursive: true });
  execFileSync(
    'sh',
    [
      '-c',
      'tar --exclude=node_modules --exclude=.turbo --exclude=./runs --exclude=./.git -cf - . | tar -xf - -C "$1"',
      'copy',
      copy,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const changeset = join(root, 'node_modules', '.bin', 'changeset');
  const quiet = { cwd: copy, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] };
  const prerelease = existsSync(join(copy, '.changeset', 'pre.json'));
  if (prerelease) execFileSync(changeset, ['version', '--snapshot', 'registry-check'], quiet);
  const packages = workspacePackages(copy);
  const version = new Map(packages.map(({ pkg }) => [pkg.name, pkg.version]));
  for (const { dir, pkg } of packages) {
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies']) {
      for (const [name, range] of Object.entries(pkg[field] ?? {})) {
        const r = String(range);
        if (!r.startsWith('workspace:')) continue;
        const v = version.get(name);
        pkg[field][name] = r === 'workspace:^' ? `^${v}` : r === 'workspace:~' ? `~${v}` : v;
      }
    }
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  }
  // any token: the registry lets anyone publish @grassflow/* (it lives for this check only)
  writeFileSync(join(copy, '.npmrc'), `registry=${url}\n//${url.replace(/^http:\/\//, '')}:_authToken=check\n`);
  execFileSync(changeset, ['publish', '--no-git-tag', ...(prerelease ? ['--tag', 'registry-check'] : [])], {
    ...quiet,
    env: { ...process.env, npm_config_registry: url },
  });
  return packages
    .filter(({ pkg }) => !pkg.private)
    .map(({ pkg }) => ({
      name: pkg.name,
      version: pkg.version,
      range: pkg.version.includes('-') ? pkg.version : `^${pkg.version}`,
    }));
}

/**
 * The install command of a package README: the first line starting with `cmd` (`\\` continuations joined, a
 * trailing comment dropped), or undefined.
 */
export function readmeInstallLine(dir, cmd) {
  const text = readFileSync(join(dir, 'README.md'), 'utf8').replace(/\\\n\s*/g, ' ');
  const line = text.split('\n').find((l) => l.startsWith(`${cmd} `));
  return line
    ?.replace(/\s+#.*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}
