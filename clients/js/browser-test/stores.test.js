// The client's browser stores (localStorage and IndexedDB) in Debian's Chromium, on a page of the
// packaged server (the client is served under /client/): their contract, and a send written while
// no server answered that a second client on the same store sends after a "reload".
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';

describe('the browser stores', { skip: requireBrowser('the store tests') }, () => {
  let server;
  let browser;
  let page;

  before(async () => {
    server = await TestServer.start();
    browser = await launch();
    page = await (await browser.newContext()).newPage();
    // the start page: same origin as the client's files, and no demo of its own writing to the stores
    await page.goto(`${server.base}/start`);
  });

  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  for (const kind of ['localStorageStore', 'indexedDbStore']) {
    test(`${kind}: values round-trip as copies, keys by prefix, delete`, async () => {
      const result = await page.evaluate(async (k) => {
        const m = await import('/client/index.js');
        const store = m[k](k === 'indexedDbStore' ? { name: 'contract' } : { prefix: 'contract:' });
        const value = { seq: 3, messages: [{ body: 'zoë ✓' }] };
        await store.set('u/chat/a', value);
        await store.set('u/chat/b', { seq: 1 });
        await store.set('v/chat/c', { seq: 9 });
        value.seq = 99;
        const got = await store.get('u/chat/a');
        const keys = (await store.keys('u/chat/')).sort();
        await store.delete('u/chat/b');
        return { got, keys, afterDelete: (await store.keys('u/')).sort(), missing: await store.get('nothing') };
      }, kind);
      assert.deepEqual(result.got, { seq: 3, messages: [{ body: 'zoë ✓' }] });
      assert.deepEqual(result.keys, ['u/chat/a', 'u/chat/b']);
      assert.deepEqual(result.afterDelete, ['u/chat/a']);
      assert.equal(result.missing, undefined);
    });

    test(`${kind}: a send written with no server reachable goes out from the next client on the store, once`, async () => {
      const name = `store-${kind}-${Date.now().toString(36)}`;
      const peerToken = await server.token(`${name}-peer`);
      const chat = await (await fetch(`${server.base}/api/chats`, {
        method: 'POST', headers: { Authorization: `Bearer ${peerToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ members: [name] }),
      })).json();
      const outcome = await page.evaluate(async ({ k, user, chatId }) => {
        const m = await import('/client/index.js');
        const make = (urls) => new m.WaterlineClient({
          urls, token: () => m.devToken(location.origin, user), store: m[k](k === 'indexedDbStore' ? { name: `db-${user}` } : { prefix: `${user}:` }),
        });
        // nothing listens on port 9 of loopback: the first client never connects
        const offline = make('http://127.0.0.1:9');
        await offline.start();
        offline.send(chatId, 'written offline');
        // close() resolves once what was written is in the store, as a page's last moment would
        await offline.close();
        const online = make(location.origin);
        const accepted = new Promise((resolve) => online.on('accepted', resolve));
        await online.start();
        const restored = online.pending().map((s) => s.body);
        const a = await accepted;
        await online.close();
        return { restored, body: a.body, seq: a.seq };
      }, { k: kind, user: name, chatId: chat.chatId });
      assert.deepEqual(outcome.restored, ['written offline']);
      assert.equal(outcome.body, 'written offline');
      assert.equal(outcome.seq, 1);
      const history = await (await fetch(`${server.base}/api/chats/${chat.chatId}/messages`, { headers: { Authorization: `Bearer ${peerToken}` } })).json();
      assert.deepEqual(history.messages.map((msg) => msg.body), ['written offline'], 'committed once');
    });
  }
});
