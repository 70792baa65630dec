// The client against a real server: the packaged jar in the zero-configuration mode, started by
// the test (see server.js). Waits are on events (wait.js), never on time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WaterlineClient, WaterlineError, memoryStore } from '../src/index.js';
import { TestServer, freePort } from './server.js';
import { TcpProxy } from './proxy.js';
import { until, next } from './wait.js';
import { runConversation, readHistory } from '../bench/scenario.js';

let server;
const run = Date.now().toString(36);
const user = (name) => `${name}-${run}`;
const opened = [];

function client(name, options = {}) {
  const c = new WaterlineClient({ urls: server.base, token: () => server.token(name), ...options });
  c.errors = [];
  c.on('error', (e) => c.errors.push(e));
  opened.push(c);
  return c;
}

async function started(c) {
  await c.start();
  if (c.state !== 'open') await next(c, 'state', (e) => e.state === 'open');
  return c;
}

before(async () => { server = await TestServer.start(); });
after(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await server?.dispose();
});

test('two clients converse: each hands over every message once, own sends included, in seq order', async () => {
  // acks flush when five are waiting and never on the timer, so the batching checked below does
  // not depend on how fast this machine delivers (the 20 ms timer let a slow run send one per frame)
  const batching = { ackBatch: 5, ackDelayMs: 3_600_000 };
  const alice = await started(client(user('alice'), batching));
  const bob = await started(client(user('bob'), batching));
  const chat = await alice.createChat([bob.userId], 'talk');
  const seen = { [alice.userId]: [], [bob.userId]: [] };
  alice.on('message', (m) => m.chatId === chat.chatId && seen[alice.userId].push(m));
  bob.on('message', (m) => m.chatId === chat.chatId && seen[bob.userId].push(m));
  const sends = [];
  for (let i = 0; i < 20; i++) sends.push((i % 2 ? bob : alice).send(chat.chatId, `line ${i}`));
  const answers = await Promise.all(sends);
  assert.equal(new Set(answers.map((a) => a.seq)).size, 20);
  await until([alice, bob], () => alice.cursor(chat.chatId) === 20 && bob.cursor(chat.chatId) === 20
    && alice.stats().acked + alice.stats().acksQueued === 10 && bob.stats().acked + bob.stats().acksQueued === 10,
  { what: 'both at seq 20, every delivery taken', pollMs: 50 });
  for (const list of Object.values(seen)) {
    assert.deepEqual(list.map((m) => m.seq), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(new Set(list.map((m) => m.messageId)).size, 20);
  }
  // each side's own lines carry its own correlationIds and bodies; the other's came as deliveries and were acked
  assert.deepEqual(seen[bob.userId].map((m) => m.body), seen[alice.userId].map((m) => m.body));
  for (const c of [alice, bob]) {
    const st = c.stats();
    assert.equal(st.acked, 10, `every delivery acked: ${JSON.stringify(st)}`);
    assert.equal(st.ackFrames, 2, `acks are batched, five to a frame: ${JSON.stringify(st)}`);
  }
  assert.deepEqual(alice.messages(chat.chatId).map((m) => m.seq), seen[alice.userId].map((m) => m.seq));
});

test('a send to a chat that is not the caller\'s fails as not_found, a body over the limit as too_large; nothing is retried', async () => {
  const carol = await started(client(user('carol')));
  const failed = [];
  carol.on('failed', (f) => failed.push(f));
  await assert.rejects(carol.send('01NOSUCHCHAT0000000000000', 'hello'), (e) => e instanceof WaterlineError && e.code === 'not_found');
  const chat = await carol.createChat([user('dave')]);
  const max = carol.limits.maxBodyChars;
  assert.ok(max > 0);
  await assert.rejects(carol.send(chat.chatId, 'y'.repeat(max + 1)), (e) => e.code === 'too_large');
  assert.deepEqual(failed.map((f) => f.code), ['not_found', 'too_large']);
  assert.equal(carol.pending().length, 0);
  assert.equal((await carol.send(chat.chatId, 'fits')).seq, 1, 'the connection and the chat still work');
});

test('a send too large for a frame fails as too_large without costing the connection', async () => {
  const c = await started(client(user('quinn')));
  const chat = await c.createChat([user('rae')]);
  const connects = c.stats().connects;
  await assert.rejects(c.send(chat.chatId, 'z'.repeat(c.limits.maxFrameBytes)), (e) => e.code === 'too_large');
  assert.equal((await c.send(chat.chatId, 'small')).seq, 1);
  assert.equal(c.stats().connects, connects, 'no reconnect');
  assert.equal(c.pending().length, 0);
});

test('send() before start() is refused; a send made while start() loads is kept and sent', async () => {
  const peer = await started(client(user('tia')));
  const name = user('sam');
  const chat = await peer.createChat([name]);
  const c = client(name);
  assert.throws(() => c.send(chat.chatId, 'too early'), /start\(\)/);
  const starting = c.start();
  const early = c.send(chat.chatId, 'early enough');
  await starting;
  assert.equal((await early).seq, 1);
  await until(peer, () => peer.cursor(chat.chatId) === 1);
});

test('a client that was away reads what it missed from history over several pages, in order, once', async () => {
  const writer = await started(client(user('uma')));
  const name = user('vic');
  const chat = await writer.createChat([name]);
  for (let i = 1; i <= 10; i++) await writer.send(chat.chatId, `missed ${i}`);
  const late = client(name, { pageSize: 3 });
  const got = [];
  late.on('message', (m) => m.chatId === chat.chatId && got.push(m.seq));
  await started(late);
  await next(late, 'caughtUp');
  assert.deepEqual(got, Array.from({ length: 10 }, (_, i) => i + 1));
  assert.ok(late.stats().historyPages >= 4, `pages of 3: ${late.stats().historyPages}`);
});

test('the server killed and restarted mid-conversation: nothing lost, nothing handed over twice, order kept', async () => {
  const report = await runConversation({
    urls: server.base, token: (u) => server.token(u), users: 6, rate: 50, durationMs: 6000, killAt: 2500,
    prefix: user('crash'), onKill: async () => { await server.kill(); await server.restart(); },
  });
  assert.ok(report.accepted > 0 && report.accepted === report.offered, JSON.stringify(report));
  assert.deepEqual(report.failures, []);
  assert.ok(report.verdict.clean, JSON.stringify(report.verdict.lost.slice(0, 5)));
  assert.ok(report.caughtUp, 'every member reached its chat\'s last seq by the client\'s own resyncs');
  assert.equal(report.appDuplicates, 0);
  assert.equal(report.order.violations, 0, JSON.stringify(report.order.first));
  assert.ok(report.welcomes >= 12, `every client connected again after the restart: ${report.welcomes} welcomes`);
});

test('a second tab of the same user supersedes the first with 4009, and the first stays down until asked', async () => {
  const name = user('erin');
  const first = await started(client(name));
  const superseded = next(first, 'state', (e) => e.state === 'superseded');
  const second = await started(client(name));
  const e = await superseded;
  assert.equal(e.code, 4009);
  const connects = first.stats().connects;
  const chat = await second.createChat([user('frank')]);
  await second.send(chat.chatId, 'still mine');
  assert.equal(second.state, 'open');
  assert.equal(first.state, 'superseded');
  assert.equal(first.stats().connects, connects, 'the superseded tab did not try again on its own');
  const back = next(second, 'state', (s) => s.state === 'superseded');
  const reopened = next(first, 'state', (s) => s.state === 'open');
  first.reconnect();
  await Promise.all([back, reopened]);
});

test('a send whose answer was lost with the connection is re-sent with its correlationId and accepted once', async () => {
  const proxy = await TcpProxy.start(server.port);
  try {
    const gina = await started(client(user('gina'), { urls: proxy.base }));
    const hal = await started(client(user('hal')));
    const chat = await gina.createChat([hal.userId]);
    const delivered = [];
    hal.on('message', (m) => m.chatId === chat.chatId && delivered.push(m));
    proxy.hold();
    const send = gina.send(chat.chatId, 'said once');
    // hal receiving it proves the server committed it; gina's accepted is held in the proxy
    const got = await next(hal, 'message', (m) => m.chatId === chat.chatId);
    assert.equal(gina.pending(chat.chatId).length, 1, 'no answer reached gina');
    proxy.cut();
    const accepted = await send;
    assert.equal(accepted.messageId, got.messageId, 'the retry was answered with the original message');
    assert.ok(gina.stats().resent >= 1, `it went again after the reconnect: ${JSON.stringify(gina.stats())}`);
    const history = await readHistory(hal, chat.chatId);
    assert.equal(history.filter((m) => m.body === 'said once').length, 1);
    await until([hal, gina], () => gina.cursor(chat.chatId) === 1);
    assert.equal(delivered.length, 1);
  } finally {
    await proxy.down();
  }
});

test('sends refused as rate_limited are retried with backoff until every one is accepted once', async () => {
  const limited = await TestServer.start({ args: ['--waterline.gateway.max-sends-per-second=5'] });
  try {
    const mk = (name) => {
      const c = new WaterlineClient({ urls: limited.base, token: () => limited.token(name), ordered: false, sendRetryInitialMs: 100, sendRetryMaxMs: 1000 });
      opened.push(c);
      return c;
    };
    const ivy = await started(mk('ivy'));
    const chat = await ivy.createChat(['jon']);
    const retries = [];
    ivy.on('retry', (r) => retries.push(r.code));
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => ivy.send(chat.chatId, `burst ${i}`)));
    assert.ok(retries.includes('rate_limited'), `some sends were refused and retried: ${retries.length}`);
    assert.deepEqual(answers.map((a) => a.seq).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1));
    const history = await readHistory(ivy, chat.chatId);
    assert.equal(history.length, 30, 'no send was committed twice');
    // ordered (the default): a chat's sends commit in the order written, retries and all
    const kai = await started(new WaterlineClient({ urls: limited.base, token: () => limited.token('kai'), sendRetryInitialMs: 100, sendRetryMaxMs: 1000 }));
    opened.push(kai);
    const other = await kai.createChat(['lou']);
    const kaiRetries = [];
    kai.on('retry', (r) => kaiRetries.push(r.code));
    const written = Array.from({ length: 15 }, (_, i) => `in order ${i}`);
    // more than the 5 a second: some are refused and retried while later ones wait their turn
    const inOrder = await Promise.all(written.map((b) => kai.send(other.chatId, b)));
    assert.ok(kaiRetries.includes('rate_limited'), `some of them were refused and retried: ${kaiRetries.length}`);
    assert.deepEqual(inOrder.map((a) => a.seq), Array.from({ length: 15 }, (_, i) => i + 1));
    assert.deepEqual((await readHistory(kai, other.chatId)).map((m) => m.body), written);
  } finally {
    await limited.dispose();
  }
});

test('unsent messages and the cursor survive a restart of the client through its store', async () => {
  const store = memoryStore();
  const name = user('kim');
  const peer = await started(client(user('lee')));
  const chat = await peer.createChat([name]);
  await peer.send(chat.chatId, 'before');
  // the first life of kim's client never reaches a server: its sends stay unsent, in the store
  const deadPort = await freePort();
  const first = client(name, { store, urls: `http://127.0.0.1:${deadPort}` });
  await first.start();
  first.send(chat.chatId, 'written offline 1');
  first.send(chat.chatId, 'written offline 2');
  await until(first, () => first.pending().every((s) => s.state === 'queued') && first.pending().length === 2);
  await first.close();
  const second = client(name, { store });
  const accepted = [];
  second.on('accepted', (a) => accepted.push(a.body));
  const seen = [];
  second.on('message', (m) => m.chatId === chat.chatId && seen.push(m.body));
  await second.start();
  assert.equal(second.pending().length, 2, 'the unsent sends came back from the store');
  await until([second, peer], () => accepted.length === 2 && peer.cursor(chat.chatId) === 3);
  assert.deepEqual(accepted, ['written offline 1', 'written offline 2'], 'in the order they were written');
  assert.deepEqual(peer.messages(chat.chatId).map((m) => m.body), ['before', 'written offline 1', 'written offline 2']);
  await second.close();
  // a third life starts from the stored cursor: nothing handed over again
  const third = client(name, { store });
  const again = [];
  third.on('message', (m) => again.push(m.seq));
  await started(third);
  await next(third, 'caughtUp');
  assert.deepEqual(again, []);
  assert.deepEqual(third.messages(chat.chatId).map((m) => m.seq), [1, 2, 3]);
});

test('a stream read from the middle over the WebSocket and over SSE: every chunk from there once, in order, to the end', async () => {
  const bot = await started(client(user('bot')));
  const reader = await started(client(user('reader')));
  const chat = await bot.createChat([reader.userId]);
  const stream = await bot.rest('POST', `/api/chats/${chat.chatId}/streams`, { title: 'reply' });
  const append = (from, to) => bot.rest('POST', `/api/streams/${stream.streamId}/chunks`,
    { chunks: Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, data: `w${from + i} ` })) });
  await append(1, 10);
  const got = { ws: [], sse: [] };
  const other = await started(client(user('reader2')));
  await bot.addMember(chat.chatId, other.userId);
  reader.on('chunk', (c) => c.streamId === stream.streamId && got.ws.push(c.seq));
  other.on('chunk', (c) => c.streamId === stream.streamId && got.sse.push(c.seq));
  const wsSub = reader.subscribe(stream.streamId, { fromSeq: 5, transport: 'ws' });
  assert.equal(reader.subscribe(stream.streamId, { fromSeq: 1 }), wsSub, 'one subscription per stream and client');
  const sse = other.subscribe(stream.streamId, { fromSeq: 5, transport: 'sse' });
  await until([reader, other], () => got.ws.length >= 6 && got.sse.length >= 6, { what: 'the stored chunks from 5' });
  await append(11, 15);
  await bot.rest('POST', `/api/streams/${stream.streamId}/complete`, { lastSeq: 15 });
  const [endWs, endSse] = await Promise.all([wsSub.done, sse.done]);
  assert.equal(endWs.state, 'complete');
  assert.equal(endSse.state, 'complete');
  const expected = Array.from({ length: 11 }, (_, i) => i + 5);
  assert.deepEqual(got.ws, expected);
  assert.deepEqual(got.sse, expected);
  assert.equal(sse.transport, 'sse');
  assert.equal(wsSub.transport, 'ws');
});

test('with no WebSocket open, a subscription falls back to SSE by itself and reads the stream to its end', async () => {
  const bot = await started(client(user('bot3')));
  const name = user('reader4');
  const chat = await bot.createChat([name]);
  const stream = await bot.rest('POST', `/api/chats/${chat.chatId}/streams`, {});
  await bot.rest('POST', `/api/streams/${stream.streamId}/chunks`, { chunks: [1, 2, 3].map((s) => ({ seq: s, data: `${s}` })) });
  await bot.rest('POST', `/api/streams/${stream.streamId}/complete`, { lastSeq: 3 });
  // never started: no WebSocket at all, only a token provider
  const reader = client(name);
  const seqs = [];
  reader.on('chunk', (c) => seqs.push(c.seq));
  const sub = reader.subscribe(stream.streamId);
  assert.equal(sub.transport, 'sse');
  assert.equal((await sub.done).state, 'complete');
  assert.deepEqual(seqs, [1, 2, 3]);
});

test('a stream subscription resumes after a dropped connection from the last chunk seen', async () => {
  const proxy = await TcpProxy.start(server.port);
  try {
    const bot = await started(client(user('bot2')));
    const reader = await started(client(user('reader3'), { urls: proxy.base }));
    const chat = await bot.createChat([reader.userId]);
    const stream = await bot.rest('POST', `/api/chats/${chat.chatId}/streams`, {});
    const seqs = [];
    reader.on('chunk', (c) => seqs.push(c.seq));
    const sub = reader.subscribe(stream.streamId, { transport: 'ws' });
    await bot.rest('POST', `/api/streams/${stream.streamId}/chunks`, { chunks: [1, 2, 3].map((s) => ({ seq: s, data: `${s}` })) });
    await until(reader, () => seqs.length === 3);
    const down = next(reader, 'state', (e) => e.state === 'reconnecting');
    proxy.cut();
    await down;
    await bot.rest('POST', `/api/streams/${stream.streamId}/chunks`, { chunks: [4, 5].map((s) => ({ seq: s, data: `${s}` })) });
    await bot.rest('POST', `/api/streams/${stream.streamId}/complete`, { lastSeq: 5 });
    await sub.done;
    assert.deepEqual(seqs, [1, 2, 3, 4, 5]);
  } finally {
    await proxy.down();
  }
});

test('keepalive: an idle client outlives the server\'s idle timeout; a path that goes silent is given up and replaced', async () => {
  const quick = await TestServer.start({ args: ['--waterline.reapers.idle-timeout=3s'] });
  const proxy = await TcpProxy.start(quick.port);
  try {
    const c = new WaterlineClient({ urls: proxy.base, token: () => quick.token('idler'), backoffInitialMs: 50 });
    opened.push(c);
    const states = [];
    c.on('state', (s) => states.push(s));
    await started(c);
    assert.equal(c.limits.idleTimeoutSeconds, 3);
    // nothing but its own pings for longer than the idle timeout (a ping a second): still the first connection
    await until(c, () => c.stats().pings >= 5, { timeoutMs: 30_000, what: 'five pings', pollMs: 100 });
    assert.equal(c.stats().connects, 1, JSON.stringify(states));
    assert.ok(!states.some((s) => s.code === 4000), 'never closed as idle');
    // the server's answers stop reaching the client (a half-open path): given up within an idle timeout, then a new connection
    proxy.hold();
    const dropped = next(c, 'state', (s) => s.state === 'reconnecting');
    const back = next(c, 'state', (s) => s.state === 'open');
    const e = await dropped;
    assert.match(e.reason, /nothing received/);
    await back;
    assert.equal(c.stats().welcomes, 2);
  } finally {
    await proxy.down();
    await quick.dispose();
  }
});

test('read receipts reach the other member and raise readSeq', async () => {
  const mia = await started(client(user('mia')));
  const ned = await started(client(user('ned')));
  const chat = await mia.createChat([ned.userId]);
  await mia.send(chat.chatId, 'read me');
  await until(ned, () => ned.cursor(chat.chatId) === 1);
  const receipt = next(mia, 'read', (r) => r.chatId === chat.chatId);
  ned.markRead(chat.chatId, 1);
  assert.deepEqual(await receipt, { chatId: chat.chatId, userId: ned.userId, seq: 1 });
  assert.equal(mia.readSeq(chat.chatId)[ned.userId], 1);
  assert.equal((await mia.getChat(chat.chatId)).readSeq[ned.userId], 1);
});

test('typing: sent at most every 3 s per chat, shown to the other member until their message, never to the typist', async () => {
  const ida = await started(client(user('ida')));
  const jon = await started(client(user('jon')));
  const chat = await ida.createChat([jon.userId]);
  const shown = next(jon, 'typing', (e) => e.chatId === chat.chatId && e.typing);
  assert.equal(ida.typing(chat.chatId), true, 'the first keystroke sends a frame');
  assert.equal(ida.typing(chat.chatId), false, 'the next within 3 s does not');
  assert.deepEqual(await shown, { chatId: chat.chatId, userId: ida.userId, typing: true });
  assert.deepEqual(jon.typists(chat.chatId), [ida.userId]);
  const ended = next(jon, 'typing', (e) => e.chatId === chat.chatId && !e.typing);
  await ida.send(chat.chatId, 'done typing');
  assert.deepEqual(await ended, { chatId: chat.chatId, userId: ida.userId, typing: false }, 'her message ends it');
  assert.deepEqual(jon.typists(chat.chatId), []);
  assert.equal(ida.typing(chat.chatId), true, 'her send starts the 3 s afresh: typing again goes out at once');
});

test('a token provider is asked again on every connection', async () => {
  const reasons = [];
  const proxy = await TcpProxy.start(server.port);
  try {
    const name = user('oli');
    const c = new WaterlineClient({ urls: proxy.base, token: async ({ reason }) => { reasons.push(reason); return server.token(name); } });
    opened.push(c);
    await started(c);
    proxy.cut();
    await next(c, 'state', (e) => e.state === 'reconnecting');
    await next(c, 'state', (e) => e.state === 'open');
    assert.ok(reasons.filter((r) => r === 'reconnect').length >= 1, JSON.stringify(reasons));
  } finally {
    await proxy.down();
  }
});

test('a list of URLs: with the first node unreachable the client connects through the next', async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const c = client(user('pat'), { urls: [dead, server.base], backoffInitialMs: 50 });
  const states = [];
  c.on('state', (s) => states.push(s));
  await started(c);
  assert.equal(c.url, server.base);
  assert.ok(states.some((s) => s.state === 'reconnecting' && s.code === 1006), JSON.stringify(states));
});
