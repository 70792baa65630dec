// The server the tests talk to: the packaged jar (target/waterline-*.jar of the repository) in the
// zero-configuration mode, with its own data folder and a free loopback port, started in a
// process group of its own so that kill() takes the JVM and its embedded PostgreSQL and Redis
// at once, as a lost machine would; restart() starts it again on the same port and data.
// cluster() starts two nodes of one deployment: the second names the first's embedded PostgreSQL
// and Redis.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, existsSync, openSync, closeSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** WATERLINE_JAR, or the most recently built target/waterline-*.jar (an earlier version's may lie beside it). */
export function serverJar() {
  if (process.env.WATERLINE_JAR) return process.env.WATERLINE_JAR;
  const dir = join(REPO, 'target');
  const jars = existsSync(dir) ? readdirSync(dir).filter((f) => /^waterline-.*\.jar$/.test(f) && !f.endsWith('-plain.jar')) : [];
  if (jars.length === 0) throw new Error(`no server jar in ${dir}: run ./mvnw -DskipTests package (or ./mvnw verify) first`);
  return jars.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/**
 * The jar the tests start: the packaged one, extracted once per test process into Spring Boot's
 * plain layout (a thin jar whose manifest lists lib/), as the container image runs it. The
 * packaged jar's nested-jar class loader can deadlock a starting server whose virtual threads
 * load classes while requests arrive (spring-projects/spring-boot#51463; seen here as a restarted
 * server that never answered its readiness probe), and the extracted layout loads classes with
 * the JDK's own loader. docs/OPERATIONS.md, "Running the packaged jar".
 */
let extractedJar;
function launchJar() {
  if (!extractedJar) {
    const jar = serverJar();
    const dir = mkdtempSync(join(process.env.WATERLINE_TEST_TMP ?? tmpdir(), 'waterline-jar-'));
    execFileSync(javaCommand(), ['-Djarmode=tools', '-jar', jar, 'extract', '--destination', dir], { stdio: 'ignore' });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    extractedJar = join(dir, basename(jar));
  }
  return extractedJar;
}

/**
 * The java of the JDK (21 or newer) that the build selected and recorded beside the jar it packaged
 * (pom.xml: the toolchains plugin, then target/java-home), whatever the default java is.
 */
export function javaCommand() {
  const file = join(REPO, 'target', 'java-home');
  if (!existsSync(file)) throw new Error(`no ${file}: run ./mvnw -DskipTests package (or ./mvnw verify) first; it records there the JDK it built with`);
  return join(readFileSync(file, 'utf8').trim(), 'bin', 'java');
}

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
  });
}

async function waitReady(base, proc, logFile, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`the server exited during start; see ${logFile}`);
    try {
      const r = await fetch(`${base}/actuator/health/readiness`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the server was not ready within ${timeoutMs} ms; see ${logFile}`);
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

export class TestServer {
  constructor({ port, dataDir, args = [] }) {
    this.port = port;
    this.dataDir = dataDir;
    this.args = args;
    this.base = `http://127.0.0.1:${port}`;
    this.proc = null;
    this.starts = 0;
  }

  static async start(options = {}) {
    const dir = mkdtempSync(join(process.env.WATERLINE_TEST_TMP ?? tmpdir(), 'waterline-js-'));
    const server = new TestServer({ port: options.port ?? await freePort(), dataDir: join(dir, 'data'), args: options.args });
    server.workDir = dir;
    await server.#launch();
    return server;
  }

  /**
   * Two nodes of one deployment (PROTOCOL.md §8), each a process of its own: the first in the
   * zero-configuration mode, with its embedded PostgreSQL and Redis; the second names those two, so
   * it starts neither and joins the first's cluster. Both run with waterline.cluster.enabled (the
   * zero-configuration mode is otherwise a single node that takes no others into account), the same
   * JWT secret (made here) and dev tokens, and args. Stop the second before the first, whose
   * process holds the data servers.
   */
  static async cluster({ args = [] } = {}) {
    const shared = ['--waterline.cluster.enabled=true', `--waterline.auth.jwt-secret=${randomBytes(48).toString('base64url')}`, ...args];
    const first = await TestServer.start({ args: shared });
    try {
      // postmaster.pid's fourth line is PostgreSQL's port; the embedded Redis says its own in the log
      const pgPort = Number(readFileSync(join(first.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
      const redisPort = Number(/Embedded Redis listening on 127\.0\.0\.1:(\d+)/.exec(first.log())?.[1]);
      if (!(pgPort > 0) || !(redisPort > 0)) throw new Error(`the first node's PostgreSQL (${pgPort}) or Redis (${redisPort}) port is not known; see ${first.logFile}`);
      const second = await TestServer.start({ args: [...shared, `--spring.datasource.url=jdbc:postgresql://127.0.0.1:${pgPort}/waterline`,
        '--spring.datasource.username=postgres', '--spring.datasource.password=', '--spring.data.redis.host=127.0.0.1',
        `--spring.data.redis.port=${redisPort}`, '--waterline.auth.dev-tokens=true', '--waterline.web.home-page=true'] });
      return [first, second];
    } catch (error) {
      await first.dispose();
      throw error;
    }
  }

  async #launch() {
    this.starts++;
    this.logFile = join(this.workDir, `server-${this.starts}.log`);
    const out = openSync(this.logFile, 'a');
    this.proc = spawn(javaCommand(), ['-XX:+ExitOnOutOfMemoryError', '-Xmx512m', '-jar', launchJar(),
      `--server.port=${this.port}`, '--server.address=127.0.0.1', `--waterline.embedded.data-dir=${this.dataDir}`,
      '--waterline.gateway.max-connections-per-address=0', '--waterline.api.requests-per-second=100000',
      '--waterline.api.burst=100000', ...this.args], { detached: true, stdio: ['ignore', out, out] });
    closeSync(out);
    this.exited = new Promise((r) => this.proc.once('exit', r));
    await waitReady(this.base, this.proc, this.logFile, 180_000);
  }

  /**
   * SIGKILL to everything, as a lost machine: the JVM's process group (the JVM and its Redis)
   * and the embedded PostgreSQL, which runs in a session of its own (pg_ctl starts it so) and is
   * named by the postmaster.pid in its data folder.
   */
  async kill() {
    const pidFile = join(this.dataDir, 'postgres', 'postmaster.pid');
    const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
    try { process.kill(-this.proc.pid, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
    await this.exited;
    if (postmaster > 0) {
      try { process.kill(postmaster, 'SIGKILL'); } catch (e) { if (e.code !== 'ESRCH') throw e; }
      // its backends leave when they see the postmaster gone; the data folder is free once none is left
      while (alive(postmaster)) await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Starts again on the same port and data folder (after kill or stop). */
  async restart() {
    await this.#launch();
  }

  /** A graceful stop (SIGTERM), then whatever is left of the group. */
  async stop() {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => { try { process.kill(-this.proc.pid, 'SIGKILL'); } catch { /* gone */ } }, 60_000);
    await this.exited;
    clearTimeout(timer);
    try { process.kill(-this.proc.pid, 'SIGKILL'); } catch { /* the group is gone */ }
  }

  /** Stops the server (gracefully) and removes its folder. */
  async dispose() {
    await this.stop();
    rmSync(this.workDir, { recursive: true, force: true });
  }

  log() { return readFileSync(this.logFile, 'utf8'); }

  async token(userId) {
    const r = await fetch(`${this.base}/api/dev/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ userId }) });
    if (r.status !== 200) throw new Error(`dev token for ${userId}: ${r.status} ${await r.text()}`);
    return (await r.json()).token;
  }
}
