// The client as an application gets it from the registry: `npm pack`, the tarball installed into a
// scratch project under target/js-package, its declarations type-checked by tsc, and the package
// imported as ESM by a script that talks to the packaged server (../test/server.js). Needs the npm
// registry once, for TypeScript.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TestServer } from '../test/server.js';

const CLIENT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = resolve(CLIENT, '../..');
const SCRATCH = join(REPO, 'target', 'js-package');
const TYPESCRIPT = '7.0.2';

const run = promisify(execFile);
async function exec(cmd, args, cwd, env = {}) {
  try {
    return (await run(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } })).stdout;
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${e.code ?? e.signal}):\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

let server;
let packed;

/** The tarball, and the scratch project that depends on it, installed from the registry. */
async function install() {
  rmSync(SCRATCH, { recursive: true, force: true });
  mkdirSync(SCRATCH, { recursive: true });
  [packed] = JSON.parse(await exec('npm', ['pack', '--json', '--pack-destination', SCRATCH], CLIENT));
  cpSync(join(CLIENT, 'package-test', 'consumer'), SCRATCH, { recursive: true });
  writeFileSync(join(SCRATCH, 'package.json'), JSON.stringify({
    name: 'waterline-client-consumer',
    private: true,
    type: 'module',
    dependencies: { '@waterline/client': `file:./${packed.filename}` },
    devDependencies: { typescript: TYPESCRIPT },
  }, null, 2));
  await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], SCRATCH);
}

// the server starts (tens of seconds) while npm packs and installs
before(async () => {
  const [started, installed] = await Promise.allSettled([TestServer.start(), install()]);
  if (started.status === 'fulfilled') server = started.value;
  for (const r of [started, installed]) if (r.status === 'rejected') throw r.reason;
});

after(async () => { await server?.dispose(); });

test('the tarball holds the sources, their declarations, the README and the license, and nothing else', () => {
  const own = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8'));
  assert.equal(packed.name, '@waterline/client');
  assert.equal(packed.version, own.version);
  const files = packed.files.map((f) => f.path).sort();
  assert.ok(files.includes('src/index.js') && files.includes('src/index.d.ts'), files.join(', '));
  assert.deepEqual(files.filter((f) => !f.startsWith('src/')), ['LICENSE', 'README.md', 'package.json']);
  assert.equal(readFileSync(join(SCRATCH, 'node_modules/@waterline/client/LICENSE'), 'utf8'),
    readFileSync(join(REPO, 'LICENSE'), 'utf8'), 'clients/js/LICENSE is the repository\'s');
});

test('tsc type-checks an application against the declarations that package.json exports', async () => {
  await exec(join(SCRATCH, 'node_modules/.bin/tsc'), ['-p', '.'], SCRATCH);
});

test('the installed package, imported as ESM, carries a message from one user to another', async () => {
  const out = await exec(process.execPath, ['--experimental-websocket', 'use.mjs'], SCRATCH, { WATERLINE_URL: server.base });
  const result = JSON.parse(out.trim().split('\n').pop());
  assert.equal(result.accepted, 1);
  assert.equal(result.delivered, 1);
  assert.match(result.sender, /^alice-/);
});
