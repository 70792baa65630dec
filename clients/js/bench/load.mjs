#!/usr/bin/env node
// The JavaScript client's load harness (figures in docs/BENCHMARKS.md, "JavaScript client").
//
//   node --experimental-websocket bench/load.mjs conversation [--users 50 --rate 500 --duration 30 --runs 3]
//     a conversation run (scenario.js: the Java generator's shape and reconciliation); reports
//     this process's CPU per message (the clients' own cost: sends, accepted, deliveries, acks).
//   node --experimental-websocket bench/load.mjs outage [--missed 1000 --outage 30 --runs 5]
//     a reader cut off for --outage seconds (its TCP proxy refuses connections) while --missed
//     messages are sent to it; reports restore → open and open → caught up.
//
// Both start the packaged jar in the zero-configuration mode (test/server.js) unless --url names a
// running server with dev tokens. Medians of --runs runs; every run's figures are printed too.
import { parseArgs } from 'node:util';
import { execSync } from 'node:child_process';
import { cpus } from 'node:os';
import { TestServer } from '../test/server.js';
import { TcpProxy } from '../test/proxy.js';
import { until, next } from '../test/wait.js';
import { runConversation } from './scenario.js';
import { WaterlineClient, devToken } from '../src/index.js';

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    users: { type: 'string', default: '50' },
    rate: { type: 'string', default: '500' },
    duration: { type: 'string', default: '30' },
    pattern: { type: 'string', default: 'pairwise' },
    payload: { type: 'string', default: '100' },
    missed: { type: 'string', default: '1000' },
    outage: { type: 'string', default: '30' },
    'backoff-max-ms': { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
  },
});
const mode = positionals[0] ?? 'conversation';
const runs = Number(a.runs);
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

const server = a.url ? null : await TestServer.start();
const base = a.url ?? server.base;
const port = Number(new URL(base).port);
const token = (u) => devToken(base, u);
const commit = (() => { try { return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim(); } catch { return 'unknown'; } })();
console.log(JSON.stringify({ mode, commit, node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, args: a }));

try {
  if (mode === 'conversation') {
    const results = [];
    for (let i = 0; i < runs; i++) {
      const r = await runConversation({ urls: base, token, users: Number(a.users), rate: Number(a.rate), durationMs: Number(a.duration) * 1000,
        pattern: a.pattern, payload: Number(a.payload), prefix: `bench${Date.now().toString(36)}r${i}` });
      // a message costs the sender its send and accepted, and each recipient its delivery and ack
      const perMessage = r.cpuMicros / r.accepted;
      const perFrame = r.cpuMicros / (r.accepted + r.delivered);
      results.push({ run: i + 1, accepted: r.accepted, delivered: r.delivered, clean: r.verdict.clean, appDuplicates: r.appDuplicates,
        orderViolations: r.order.violations, cpuMs: Math.round(r.cpuMicros / 1000), cpuMicrosPerMessage: +perMessage.toFixed(1),
        cpuMicrosPerHandOver: +perFrame.toFixed(1), cpuShare: +(r.cpuMicros / 1000 / r.drainedMs).toFixed(3), drainedMs: Math.round(r.drainedMs) });
      console.log(JSON.stringify(results.at(-1)));
    }
    console.log(JSON.stringify({ median: { cpuMicrosPerMessage: median(results.map((r) => r.cpuMicrosPerMessage)),
      cpuMicrosPerHandOver: median(results.map((r) => r.cpuMicrosPerHandOver)), cpuShare: median(results.map((r) => r.cpuShare)) },
      allClean: results.every((r) => r.clean && r.appDuplicates === 0 && r.orderViolations === 0) }));
  } else if (mode === 'outage') {
    const results = [];
    for (let i = 0; i < runs; i++) {
      const tag = `out${Date.now().toString(36)}r${i}`;
      const proxy = await TcpProxy.start(port);
      const sender = new WaterlineClient({ urls: base, token: () => token(`${tag}-s`) });
      const reader = new WaterlineClient({ urls: proxy.base, token: () => token(`${tag}-r`), backoffMaxMs: Number(a['backoff-max-ms']) });
      for (const c of [sender, reader]) { c.on('error', () => {}); await c.start(); }
      await until([sender, reader], () => sender.state === 'open' && reader.state === 'open');
      const chat = await sender.createChat([reader.userId]);
      await sender.send(chat.chatId, 'before');
      await until(reader, () => reader.cursor(chat.chatId) === 1);
      const downAt = performance.now();
      await proxy.down();
      const missed = Number(a.missed);
      const body = 'm'.repeat(100);
      await Promise.all(Array.from({ length: missed }, (_, k) => sender.send(chat.chatId, `${k} ${body}`)));
      const sentMs = performance.now() - downAt;
      const outageMs = Number(a.outage) * 1000;
      if (sentMs < outageMs) await new Promise((r) => setTimeout(r, outageMs - sentMs));
      const opened = next(reader, 'state', (e) => e.state === 'open', 120_000);
      const cpu0 = process.cpuUsage();
      const upAt = performance.now();
      await proxy.up();
      await opened;
      const openMs = performance.now() - upAt;
      await until(reader, () => reader.cursor(chat.chatId) === missed + 1, { timeoutMs: 120_000, what: 'caught up' });
      const caughtUpMs = performance.now() - upAt;
      const cpu = process.cpuUsage(cpu0);
      const st = reader.stats();
      results.push({ run: i + 1, outageMs: Math.round(upAt - downAt), sendMs: Math.round(sentMs), restoreToOpenMs: Math.round(openMs),
        openToCaughtUpMs: Math.round(caughtUpMs - openMs), restoreToCaughtUpMs: Math.round(caughtUpMs), historyPages: st.historyPages,
        duplicates: st.duplicates, delivered: st.delivered, cpuMsBothClients: Math.round((cpu.user + cpu.system) / 1000) });
      console.log(JSON.stringify(results.at(-1)));
      await sender.close();
      await reader.close();
      await proxy.down();
    }
    console.log(JSON.stringify({ median: { restoreToOpenMs: median(results.map((r) => r.restoreToOpenMs)),
      openToCaughtUpMs: median(results.map((r) => r.openToCaughtUpMs)), restoreToCaughtUpMs: median(results.map((r) => r.restoreToCaughtUpMs)) } }));
  } else {
    throw new Error(`unknown mode ${mode}: conversation | outage`);
  }
} finally {
  await server?.dispose();
}
