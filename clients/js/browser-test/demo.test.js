// The demo page (src/main/resources/demo, served at / in the zero-configuration mode) driven in
// Debian's Chromium through playwright-core, against the packaged server (../test/server.js).
// Every wait is on a condition of the page; screenshots of each step go to target/browser-screenshots.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { DemoPages, connection, shot, createChat, openChat, send, message, inState, logOf, assertConsistent, bodies } from './page.js';

describe('the demo page', { skip: requireBrowser('the demo page tests') }, () => {
  let server;
  let browser;
  let pages;

  before(async () => {
    server = await TestServer.start();
    browser = await launch();
    pages = new DemoPages(browser, server.base);
  });

  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  afterEach(() => pages.reset());

  const watch = (page, who) => pages.watch(page, who);
  const assertNoPageProblems = () => pages.assertNoProblems();
  const newContext = (options) => pages.newContext(options);
  const person = (name, options) => pages.person(name, options);

  test('two people converse, and a message says who has read it', { timeout: 120_000 }, async () => {
    const alice = await person('alice');
    await shot(alice.page, '01-alice-signed-in.png');
    const bob = await person('bob');

    await createChat(alice.page, 'bob', 'plans');
    // every field is labelled, and the messages are a polite live log
    assert.deepEqual(await alice.page.locator('input, textarea').evaluateAll((els) => els
      .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label')).map((el) => el.id)), []);
    assert.equal(await alice.page.locator('[role="log"][aria-live="polite"]').count(), 1);
    // The log is live for additions: a bubble taken out and put back would be heard twice, so
    // every bubble that leaves the log is counted, in the page, from before the first send.
    await alice.page.getByTestId('messages').evaluate((log) => {
      window.bubblesRemoved = 0;
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.removedNodes) if (n.classList?.contains('msg')) window.bubblesRemoved++;
      }).observe(log, { childList: true });
    });
    // markup in a body stays text: the page never parses a body as HTML
    const hello = 'Hi bob! <b>not bold</b> & <img src=x onerror="window.pwned=1">';
    await send(alice.page, hello);
    const mine = message(alice.page, hello);
    await inState(alice.page, mine, 'accepted').waitFor();
    assert.match(await mine.getByTestId('message-status').textContent(), /sent/i);
    // the change of status is said in a status region of its own, outside the log
    const announcer = alice.page.getByTestId('announcer');
    await announcer.filter({ hasText: /^Sent: “Hi bob!/ }).waitFor({ state: 'attached' });
    assert.equal(await alice.page.locator('[role="log"] [data-testid="announcer"]').count(), 0);
    assert.equal(await announcer.getAttribute('role'), 'status');
    await shot(alice.page, '02-alice-sends.png');

    const item = bob.page.getByTestId('chat-item').filter({ hasText: 'plans' });
    await item.getByTestId('unread').filter({ hasText: /^1 unread$/ }).waitFor();
    // bob has not opened the chat: nobody has read alice's message yet
    assert.equal(await mine.getAttribute('data-state'), 'accepted');
    await shot(bob.page, '03-bob-has-an-unread-chat.png');

    await openChat(bob.page, 'plans');
    const received = message(bob.page, hello);
    await received.waitFor();
    assert.equal(await received.getByTestId('message-body').textContent(), hello);
    assert.equal(await received.locator('b, img').count(), 0);
    assert.equal(await bob.page.evaluate(() => window.pwned), undefined);
    assert.equal(await received.getAttribute('data-sender'), 'alice');

    const reply = 'Hello alice, the plans sound good.';
    await send(bob.page, reply);
    await inState(bob.page, message(bob.page, reply), 'accepted', 'read').waitFor();
    await shot(bob.page, '04-bob-replies.png');

    await message(alice.page, reply).waitFor();
    await inState(alice.page, mine, 'read').waitFor();
    assert.match(await mine.getByTestId('message-status').textContent(), /^read by bob$/i);
    await announcer.filter({ hasText: /^Read by bob: “Hi bob!/ }).waitFor({ state: 'attached' });
    assert.equal(await alice.page.evaluate(() => window.bubblesRemoved), 0, 'a bubble was taken out of the log');
    await shot(alice.page, '05-alice-sees-the-reply-and-read-by-bob.png');

    for (const [who, page] of [['alice', alice.page], ['bob', bob.page]]) {
      const log = await logOf(page);
      assertConsistent(log, who);
      assert.deepEqual(bodies(log), [hello, reply], who);
    }
    assertNoPageProblems();
  });

  test('a send the server refuses shows why; a member can be added', { timeout: 120_000 }, async () => {
    const mia = await person('mia');
    const noor = await person('noor');
    await createChat(mia.page, 'noor', 'refusals');
    await send(mia.page, 'fine');
    await inState(mia.page, message(mia.page, 'fine'), 'accepted').waitFor();
    // an unpaired surrogate is refused as invalid (PROTOCOL.md §3): the send fails for good
    // (set inside the page: the string would not survive the trip there as UTF-8)
    const box = mia.page.getByLabel('Message', { exact: true });
    await box.evaluate((el) => { el.value = `broken ${String.fromCharCode(0xd800)} text`; });
    await box.press('Enter');
    const failed = mia.page.locator('[data-testid="message"][data-state="failed"]');
    await failed.waitFor();
    assert.match(await failed.getByTestId('message-status').textContent(), /^Not sent: .*\(invalid\)$/);
    await mia.page.getByTestId('announcer').filter({ hasText: /^Not sent: .*\(invalid\): “broken/ }).waitFor({ state: 'attached' });
    await send(mia.page, 'after the refusal');
    await inState(mia.page, message(mia.page, 'after the refusal'), 'accepted').waitFor();
    await shot(mia.page, '06-mia-refused-send.png');
    const log = await logOf(mia.page);
    assertConsistent(log, 'mia');
    assert.deepEqual(log.map((m) => m.state), ['accepted', 'failed', 'accepted'], 'a failed send stays where it was written');
    await failed.getByRole('button', { name: 'Dismiss' }).click();
    assert.equal(await failed.count(), 0);
    // the focus was on the button just removed: it goes to the message box, not to the page's start
    assert.equal(await mia.page.evaluate(() => document.activeElement?.id), 'composer-body');

    await openChat(noor.page, 'refusals');
    await message(noor.page, 'after the refusal').waitFor();
    assert.deepEqual(bodies(await logOf(noor.page)), ['fine', 'after the refusal']);

    await mia.page.getByText('Add a member').click();
    await mia.page.getByLabel("Member's name").fill('olga');
    await mia.page.getByRole('button', { name: 'Add', exact: true }).click();
    await mia.page.getByTestId('chat-members').filter({ hasText: /olga/ }).waitFor();
    assert.equal(await mia.page.getByTestId('chat-members').textContent(), 'Members: mia (you), noor, olga');
    assertNoPageProblems();
  });

  test('a reload keeps the history and the unsent messages, which go out once connected', { timeout: 150_000 }, async () => {
    const dora = await person('dora');
    const erik = await person('erik');
    await createChat(dora.page, 'erik', 'reload');
    await send(dora.page, 'one');
    await openChat(erik.page, 'reload');
    await message(erik.page, 'one').waitFor();
    await send(erik.page, 'two');
    await message(dora.page, 'two').waitFor();

    // From here dora's page gets a socket that opens but never hears from the server (no welcome)
    // until `blocked` is cleared; only sockets made after this call are routed, hence the reload.
    let blocked = true;
    await dora.page.routeWebSocket(/\/ws(\?|$)/, (ws) => {
      if (!blocked) ws.connectToServer();
    });
    await dora.page.reload();
    await dora.page.locator('[data-testid="connection"]:is([data-state="connecting"], [data-state="reconnecting"])').waitFor();
    await message(dora.page, 'two').waitFor();

    await send(dora.page, 'three, written offline');
    const three = message(dora.page, 'three, written offline');
    await inState(dora.page, three, 'sending').waitFor();
    await shot(dora.page, '07-dora-sends-without-a-connection.png');

    await dora.page.reload();
    await inState(dora.page, three, 'sending').waitFor();
    assert.notEqual(await dora.page.getByTestId('connection').getAttribute('data-state'), 'open');
    let log = await logOf(dora.page);
    assert.deepEqual(bodies(log), ['one', 'two', 'three, written offline'], 'after the reload, before any connection');
    assert.ok(['accepted', 'read'].includes(log[0].state) && log[1].state === null && log[2].state === 'sending', JSON.stringify(log));
    assertConsistent(log, 'dora, reloaded');
    assert.equal(await message(erik.page, 'three, written offline').count(), 0, 'nothing could have left dora\'s page');
    await shot(dora.page, '08-dora-reloaded-history-and-unsent.png');

    blocked = false;
    await inState(dora.page, three, 'accepted', 'read').waitFor({ timeout: 60_000 });
    await connection(dora.page, 'open');
    await message(erik.page, 'three, written offline').waitFor();
    await shot(dora.page, '09-dora-unsent-is-accepted.png');

    // a later message as a barrier: anything shown before it in seq order is on the page by then
    await send(dora.page, 'four');
    await message(erik.page, 'four').waitFor();
    await shot(erik.page, '10-erik-received-each-once.png');
    for (const [who, page] of [['dora', dora.page], ['erik', erik.page]]) {
      log = await logOf(page);
      assertConsistent(log, who);
      assert.deepEqual(bodies(log), ['one', 'two', 'three, written offline', 'four'], who);
    }
    assertNoPageProblems();
  });

  test('a reload while the server is out of reach keeps the user signed in, on the token kept from before', { timeout: 150_000 }, async () => {
    const pia = await person('pia');
    await createChat(pia.page, 'quinn', 'offline reload');
    await send(pia.page, 'before going offline');
    await inState(pia.page, message(pia.page, 'before going offline'), 'accepted').waitFor();

    // To the page the server is gone: every API request fails (a dev token among them), and a
    // socket opens but never hears from the server until `blocked` is cleared.
    await pia.page.route('**/api/**', (route) => route.abort('connectionrefused'));
    let blocked = true;
    await pia.page.routeWebSocket(/\/ws(\?|$)/, (ws) => {
      if (!blocked) ws.connectToServer();
    });
    await pia.page.reload();
    await pia.page.locator('[data-testid="connection"]:is([data-state="connecting"], [data-state="reconnecting"])').waitFor();
    assert.equal(await pia.page.getByTestId('me').textContent(), 'pia', 'still signed in');
    assert.equal(await pia.page.getByTestId('sign-in').isVisible(), false);
    await message(pia.page, 'before going offline').waitFor();
    assert.equal(await pia.page.getByTestId('chat-title').textContent(), 'offline reload');

    await send(pia.page, 'written offline');
    const offline = message(pia.page, 'written offline');
    await inState(pia.page, offline, 'sending').waitFor();
    await shot(pia.page, '10a-pia-reloaded-offline.png');

    await pia.page.unroute('**/api/**');
    blocked = false;
    await inState(pia.page, offline, 'accepted').waitFor({ timeout: 60_000 });
    await connection(pia.page, 'open');
    const log = await logOf(pia.page);
    assertConsistent(log, 'pia');
    assert.deepEqual(bodies(log), ['before going offline', 'written offline']);
    // the server being out of reach was said by the connection indicator alone, not by a notice
    assert.equal(await pia.page.locator('#notice').isVisible(), false);
    assertNoPageProblems();
  });

  test('the server is killed and restarted: both pages reconnect by themselves and lose nothing', { timeout: 300_000 }, async () => {
    const fay = await person('fay');
    const gus = await person('gus');
    await createChat(fay.page, 'gus', 'outage');
    await send(fay.page, 'before the outage');
    await openChat(gus.page, 'outage');
    await message(gus.page, 'before the outage').waitFor();

    await server.kill();
    await connection(fay.page, 'reconnecting');
    await connection(gus.page, 'reconnecting');
    assert.match(await fay.page.getByTestId('connection').textContent(), /reconnecting/i);
    await send(fay.page, 'sent while the server was down');
    const down = message(fay.page, 'sent while the server was down');
    await inState(fay.page, down, 'sending').waitFor();
    await shot(fay.page, '11-fay-reconnecting-and-sending.png');
    await shot(gus.page, '12-gus-reconnecting.png');

    await server.restart();
    await connection(fay.page, 'open', 60_000);
    await connection(gus.page, 'open', 60_000);
    await inState(fay.page, down, 'accepted', 'read').waitFor({ timeout: 60_000 });
    await message(gus.page, 'sent while the server was down').waitFor({ timeout: 60_000 });

    await send(gus.page, 'back again');
    await message(fay.page, 'back again').waitFor();
    await shot(fay.page, '13-fay-after-the-restart.png');
    await shot(gus.page, '14-gus-after-the-restart.png');
    for (const [who, page] of [['fay', fay.page], ['gus', gus.page]]) {
      const log = await logOf(page);
      assertConsistent(log, who);
      assert.deepEqual(bodies(log), ['before the outage', 'sent while the server was down', 'back again'], who);
    }
    assertNoPageProblems();
  });

  test('a stream from the echo bot renders as it is written', { timeout: 120_000 }, async () => {
    const hana = await person('hana');
    await createChat(hana.page, 'ivan', 'bot talk');
    // Every length the stream's text has on the page, recorded in the page as it changes (so no
    // step can be missed between two looks from here), from before the bubble exists.
    await hana.page.evaluate(() => {
      window.streamLengths = [];
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="message"][data-kind="stream"] [data-testid="stream-text"]');
        if (text && window.streamLengths.at(-1) !== text.textContent.length) window.streamLengths.push(text.textContent.length);
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    await hana.page.getByRole('button', { name: 'Ask the echo bot' }).click();
    const bubble = hana.page.locator('[data-testid="message"][data-kind="stream"]');
    await bubble.waitFor();
    assert.equal(await bubble.getAttribute('data-sender'), 'echo-bot');
    // most likely partial by then, but the check of the steps is the recorded lengths' alone
    await bubble.getByTestId('stream-text').filter({ hasText: /\S/ }).waitFor();
    await shot(hana.page, '15-stream-partial.png');

    await bubble.and(hana.page.locator('[data-stream-state="complete"]')).waitFor({ timeout: 30_000 });
    const text = await bubble.getByTestId('stream-text').textContent();
    const lengths = await hana.page.evaluate(() => window.streamLengths);
    const partial = new Set(lengths.filter((n) => n > 0 && n < text.length));
    assert.ok(partial.size >= 2, `the text grew in steps: lengths ${lengths.join(', ')} of ${text.length}`);
    assert.equal(lengths.at(-1), text.length);
    assert.equal(await bubble.getByTestId('message-status').textContent(), 'Complete');
    await shot(hana.page, '16-stream-complete.png');

    // what the page shows is what the server stored, chunk by chunk
    const streamId = await bubble.getAttribute('data-stream-id');
    const res = await fetch(`${server.base}/api/streams/${encodeURIComponent(streamId)}/chunks?fromSeq=1&limit=1000`,
      { headers: { Authorization: `Bearer ${await server.token('hana')}` } });
    assert.equal(res.status, 200);
    const stored = await res.json();
    assert.equal(stored.state, 'complete');
    assert.ok(stored.chunks.length >= 3);
    assert.equal(text, stored.chunks.map((c) => c.data).join(''));

    // someone who comes later gets the whole reply replayed
    const ivan = await person('ivan');
    await openChat(ivan.page, 'bot talk');
    const replay = ivan.page.locator('[data-testid="message"][data-kind="stream"][data-stream-state="complete"]');
    await replay.waitFor();
    assert.equal(await replay.getByTestId('stream-text').textContent(), text);
    assertNoPageProblems();
  });

  test('a file uploaded as HTML or SVG runs nothing in the page\'s origin, opened or embedded', { timeout: 120_000 }, async () => {
    const mallory = await person('xss-mallory');
    // Mallory uploads pages whose script would copy the demo's token to where she could read it.
    const payload = `localStorage.setItem('pwned', JSON.stringify(Object.entries(localStorage)));
      document.title = 'pwned'; fetch('/api/dev/tokens', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ userId: 'pwned-' + location.pathname.length }) });`;
    const files = {
      'text/html': `<html><body><script>${payload}</script></body></html>`,
      'image/svg+xml': `<svg xmlns="http://www.w3.org/2000/svg" onload="${payload.replace(/"/g, '&quot;')}"><script>${payload}</script></svg>`,
      'application/xhtml+xml': `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${payload}</script></body></html>`,
    };
    const blobs = await mallory.page.evaluate(async (files) => {
      const token = localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('waterline-demo:token:')));
      const auth = { Authorization: `Bearer ${token}` };
      const json = (r) => r.json();
      const chat = await fetch('/api/chats', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ members: ['xss-victim'] }) }).then(json);
      const stream = await fetch(`/api/chats/${chat.chatId}/streams`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
        body: '{}' }).then(json);
      const out = [];
      for (const [type, body] of Object.entries(files)) {
        const r = await fetch(`/api/streams/${stream.streamId}/blobs`, { method: 'POST', headers: { ...auth, 'Content-Type': type }, body });
        out.push({ type, status: r.status, blobId: (await r.json()).blobId });
      }
      return out;
    }, files);
    assert.equal(blobs.length, 3);
    for (const b of blobs) assert.ok(b.status === 201 && typeof b.blobId === 'string', `${b.type} uploaded: ${JSON.stringify(b)}`);

    // The victim, signed in to the demo, opens each file by its link (token in the query, as Mallory would send it)
    // and the demo page embeds each in a frame: no script of the file may run with the demo's origin.
    const victim = await person('xss-victim');
    const token = await victim.page.evaluate(() => localStorage.getItem('waterline-demo:token:xss-victim'));
    assert.ok(token, 'the demo keeps its token in localStorage');
    // the files are there for the victim to read: what follows runs them, if anything would
    const served = await victim.page.evaluate(async ({ blobs, token }) => Promise.all(blobs.map(async (b) => {
      const r = await fetch(`/api/blobs/${b.blobId}`, { headers: { Authorization: `Bearer ${token}` } });
      return { status: r.status, text: await r.text() };
    })), { blobs, token });
    for (const [i, s] of served.entries()) {
      assert.equal(s.status, 200, `${blobs[i].type} readable by the victim`);
      assert.ok(s.text.includes('pwned'), `${blobs[i].type} served whole`);
    }
    for (const { type, blobId } of blobs) {
      const url = `${server.base}/api/blobs/${blobId}?access_token=${encodeURIComponent(token)}`;
      const tab = await victim.ctx.newPage();
      tab.on('download', (d) => d.cancel().catch(() => {}));
      const opened = await tab.goto(url).then((r) => r?.status() ?? 'no response', (e) => String(e.message ?? e));
      // a download is no page: Chromium aborts the navigation; if it rendered anything, the sandbox holds it
      assert.notEqual(await tab.title().catch(() => ''), 'pwned', `${type} opened: ${opened}`);
      await tab.close();
      await victim.page.evaluate((src) => new Promise((done) => {
        const frame = document.createElement('iframe');
        frame.src = src;
        frame.onload = () => done();
        setTimeout(done, 3000);
        document.body.append(frame);
      }), url);
    }
    // An inline script runs before its document's load event, which goto and the frames waited for.
    assert.equal(await victim.page.evaluate(() => localStorage.getItem('pwned')), null, 'a file\'s script ran in the demo\'s origin');
    const chats = await victim.page.evaluate(async (token) => (await fetch('/api/chats?limit=500', { headers: { Authorization: `Bearer ${token}` } })
      .then((r) => r.json())).chats.length, token);
    assert.ok(chats >= 1, 'the victim is still served');
    await shot(victim.page, '12-uploaded-html-runs-nothing.png');
  });

  test('own messages without a correlationId are each a bubble of their own', async () => {
    // This server gives every message a correlationId, so the case is made in the page: the log
    // of the demo, fed by a stand-in for the client, gets two own messages that have none.
    const page = watch(await (await newContext()).newPage(), 'log');
    await page.goto(`${server.base}/`);
    const shown = await page.evaluate(async () => {
      const { Conversation } = await import('/demo/conversation.js');
      const client = { messages: () => [], pending: () => [], readSeq: () => ({}) };
      const log = new Conversation({ client, me: 'zed', chatId: 'c1', streams: null });
      for (const seq of [1, 2]) {
        log.add({ messageId: `m${seq}`, chatId: 'c1', seq, senderId: 'zed', body: `mine ${seq}`, sentAt: new Date().toISOString(), kind: 'text' });
      }
      return [...log.log.querySelectorAll('[data-testid="message"]')].map((el) => [el.dataset.seq, el.querySelector('.body').textContent]);
    });
    assert.deepEqual(shown, [['1', 'mine 1'], ['2', 'mine 2']]);
    assertNoPageProblems();
  });

  test('at phone width the page fits the screen and stays usable', { timeout: 120_000 }, async () => {
    const phone = { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
    // The log clips sideways (overflow-x: hidden), so the page's width alone would not show a
    // bubble whose content is wider than the bubble: each is checked on its own, and the name.
    const noSideways = async (page, what) => {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 360, `${what}: the page is ${width} px wide`);
      const over = await page.locator('.msg, #me, .who').evaluateAll((els) => els
        .filter((el) => el.getClientRects().length > 0)
        .filter((el) => {
          const r = el.getBoundingClientRect();
          // an inline element (the name) has no clientWidth: its box is what must fit
          const clipped = getComputedStyle(el).display !== 'inline' && el.scrollWidth > el.clientWidth;
          return clipped || r.left < 0 || r.right > innerWidth;
        })
        .map((el) => `${el.id || el.className} ${el.scrollWidth}/${el.clientWidth} px, ${JSON.stringify(el.getBoundingClientRect())}`));
      assert.deepEqual(over, [], `${what}: wider than it may be`);
    };
    const inView = async (locator, what) => {
      const box = await locator.boundingBox();
      assert.ok(box, `${what} is not shown`);
      assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= 360 && box.y + box.height <= 740, `${what} is off screen: ${JSON.stringify(box)}`);
    };
    const focused = (page) => page.evaluate(() => document.activeElement?.id);

    // names as long as a name may nearly be, with no space to break at
    const jo = `jo-${'o'.repeat(97)}`;
    const kim = `kim-${'m'.repeat(96)}`;
    const ctx = await newContext(phone);
    const page = watch(await ctx.newPage(), 'jo');
    await page.goto(`${server.base}/`);
    await noSideways(page, 'sign-in');
    await shot(page, '17-phone-sign-in.png');
    await page.getByLabel('Your name').fill(jo);
    await page.getByLabel('Your name').press('Enter');
    await connection(page, 'open');
    assert.equal(await page.getByTestId('me').textContent(), jo);
    await noSideways(page, 'signed in with a long name');

    await createChat(page, kim, 'on the phone');
    // the chat list folds away once a chat is open; the composer is on screen
    assert.equal(await page.getByTestId('chat-list').isVisible(), false);
    assert.equal(await page.getByRole('button', { name: /^Chats/ }).getAttribute('aria-expanded'), 'false');
    // the button pressed folded away with the list: the focus is on the chat's heading, not lost
    assert.equal(await focused(page), 'chat-title');
    const long = `a long word: ${'x'.repeat(300)} and a link https://example.invalid/${'path/'.repeat(30)}`;
    await send(page, long);
    await inState(page, message(page, long), 'accepted').waitFor();

    // kim, whose name is as long, writes a stream (over REST: no browser of theirs is needed)
    const chatId = await page.evaluate(() => decodeURIComponent(location.hash.slice(1)));
    const asKim = async (path, body) => {
      const r = await fetch(`${server.base}${path}`, { method: 'POST', body: JSON.stringify(body),
        headers: { Authorization: `Bearer ${await server.token(kim)}`, 'Content-Type': 'application/json' } });
      const text = await r.text();
      assert.ok(r.ok, `${path}: ${r.status} ${text}`);
      return JSON.parse(text);
    };
    const { streamId } = await asKim(`/api/chats/${encodeURIComponent(chatId)}/streams`, { title: `notes-${'n'.repeat(100)}` });
    await asKim(`/api/streams/${encodeURIComponent(streamId)}/chunks`, { chunks: [{ seq: 1, data: 'y'.repeat(200) }] });
    await asKim(`/api/streams/${encodeURIComponent(streamId)}/complete`, { lastSeq: 1 });
    await page.locator(`[data-testid="message"][data-sender="${kim}"][data-stream-state="complete"]`).waitFor();

    await send(page, 'short one');
    await inState(page, message(page, 'short one'), 'accepted').waitFor();
    await inView(page.getByLabel('Message', { exact: true }), 'the message box');
    await inView(page.getByRole('button', { name: 'Send' }), 'the send button');
    await inView(message(page, 'short one'), 'the last message');
    await noSideways(page, 'a conversation with a long word and a long sender');
    await shot(page, '18-phone-conversation.png');

    await page.getByRole('button', { name: /^Chats/ }).click();
    await page.getByTestId('chat-list').waitFor();
    await inView(page.getByTestId('chat-item').filter({ hasText: 'on the phone' }), 'the chat in the list');
    await noSideways(page, 'the chat list');
    await shot(page, '19-phone-chat-list.png');
    await openChat(page, 'on the phone');
    assert.equal(await page.getByTestId('chat-list').isVisible(), false);
    assert.equal(await focused(page), 'chat-title');

    // A hash that is no valid percent-encoding is ignored: when it changes (an uncaught error
    // would be a page problem) and when the page loads with it (it would block the sign-in).
    await page.evaluate(() => new Promise((resolve) => {
      // listening after the page's own listener: it has run by the time this one does
      window.addEventListener('hashchange', () => resolve(), { once: true });
      location.hash = '%';
    }));
    await page.reload();
    assert.equal(await page.evaluate(() => location.hash), '#%');
    await connection(page, 'open');
    assert.equal(await page.getByTestId('me').textContent(), jo);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Your name').waitFor();
    await page.reload();
    // The page's script focuses the name box only when it finds nobody signed in (or when an
    // automatic sign-in failed): once it has, no automatic sign-in can still be on its way.
    await page.waitForFunction(() => document.activeElement?.id === 'sign-in-name');
    assert.deepEqual(await page.evaluate((name) => [localStorage.getItem('waterline-demo:user'),
      localStorage.getItem(`waterline-demo:token:${name}`)], jo), [null, null], 'the name and its token are forgotten');
    assert.equal(await page.locator('#sign-in-error').textContent(), '');
    assert.equal(await page.getByTestId('me').isVisible(), false, 'signed out stays signed out');
    assertNoPageProblems();
  });

  test('a second tab takes the session over; the first offers to take it back', { timeout: 120_000 }, async () => {
    const lee = await person('lee');
    const tab2 = watch(await lee.ctx.newPage(), 'lee, second tab');
    // the name is remembered: the second tab is signed in without asking
    await tab2.goto(`${server.base}/`);
    await connection(tab2, 'open');
    await connection(lee.page, 'superseded');
    assert.match(await lee.page.getByTestId('connection').textContent(), /another tab/i);
    await shot(lee.page, '20-superseded-by-another-tab.png');

    await lee.page.getByRole('button', { name: 'Use this tab' }).click();
    await connection(lee.page, 'open');
    await connection(tab2, 'superseded');
    assert.equal(await lee.page.getByRole('button', { name: 'Use this tab' }).isVisible(), false);
    assertNoPageProblems();
  });
});
