// The client's pure parts, without a server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readEventStream, fullJitter, tokenSubject, memoryStore } from '../src/index.js';

function bodyOf(pieces) {
  const enc = new TextEncoder();
  return new ReadableStream({ start(c) { for (const p of pieces) c.enqueue(enc.encode(p)); c.close(); } });
}

async function events(pieces) {
  const out = [];
  for await (const e of readEventStream(bodyOf(pieces))) out.push(e);
  return out;
}

test('server-sent events split anywhere, with CRLF or LF, comments and multi-line data, parse alike', async () => {
  const text = ': hello\r\nid: 1\r\nevent: chunk\r\ndata: {"seq":1,\r\ndata: "data":"a"}\r\n\r\nid: 2\nevent: stream\ndata: {"state":"complete"}\n\n';
  const whole = await events([text]);
  assert.deepEqual(whole, [
    { id: '1', event: 'chunk', data: '{"seq":1,\n"data":"a"}' },
    { id: '2', event: 'stream', data: '{"state":"complete"}' },
  ]);
  for (let cut = 1; cut < text.length; cut++) {
    assert.deepEqual(await events([text.slice(0, cut), text.slice(cut)]), whole, `cut at ${cut}`);
  }
  assert.deepEqual(await events([...text]), whole, 'one character at a time');
});

test('an event without its closing blank line is not dispatched', async () => {
  assert.deepEqual(await events(['id: 1\nevent: chunk\ndata: {}\n']), []);
});

test('a multi-byte character split between reads arrives whole', async () => {
  const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
  const body = new ReadableStream({ start(c) { for (const b of bytes) c.enqueue(new Uint8Array([b])); c.close(); } });
  const out = [];
  for await (const e of readEventStream(body)) out.push(e.data);
  assert.deepEqual(out, ['héllo ✓']);
});

test('full jitter stays within [0, min(cap, base·2^attempt)) and spreads over it', () => {
  for (let attempt = 0; attempt < 40; attempt++) {
    const ceiling = Math.min(10_000, 250 * 2 ** attempt);
    assert.equal(fullJitter(attempt, 250, 10_000, () => 0), 0);
    assert.ok(fullJitter(attempt, 250, 10_000, () => 0.999999) < ceiling);
  }
  const draws = Array.from({ length: 2000 }, () => fullJitter(10, 250, 10_000));
  assert.ok(Math.min(...draws) < 1000 && Math.max(...draws) > 9000, 'the whole window is used');
});

test('the subject of a token is read from its payload, base64url and UTF-8', () => {
  const payload = Buffer.from(JSON.stringify({ sub: 'zoë/ü', exp: 1 })).toString('base64url');
  assert.equal(tokenSubject(`e30.${payload}.sig`), 'zoë/ü');
  assert.throws(() => tokenSubject('not-a-jwt'), /compact JWT/);
});

test('the memory store hands out copies, so a caller cannot change what is stored', async () => {
  const s = memoryStore();
  const v = { a: [1] };
  await s.set('k/1', v);
  v.a.push(2);
  const got = await s.get('k/1');
  assert.deepEqual(got, { a: [1] });
  got.a.push(3);
  assert.deepEqual(await s.get('k/1'), { a: [1] });
  assert.deepEqual(await s.keys('k/'), ['k/1']);
  await s.delete('k/1');
  assert.equal(await s.get('k/1'), undefined);
});
