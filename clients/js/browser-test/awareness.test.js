// The demo page's awareness (PROTOCOL.md §10), two people in two browsers: "… is typing" shown
// while the other types, gone when their message arrives or after five quiet seconds; and
// presence: a dot beside the other person (in the chat list for a two-person chat, and beside
// each member's name in the open chat) with "last seen …" once they left, and "Hide my presence".
// Debian's Chromium through playwright-core, against the packaged server (../test/server.js),
// started with a presence debounce of 2 s instead of 10 so that an offline is seen within the
// test; every wait is on a condition of the page.
//
// Presence is tested twice: on one node, and across two nodes of one deployment (TestServer.cluster:
// a second process that names the first one's embedded PostgreSQL and Redis), alice on the first
// and bob on the second, so that what bob sees of her crosses from node to node.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { DemoPages, createChat, openChat, send, message, connection, shot } from './page.js';

const DEBOUNCE = '--waterline.presence.debounce=2s';
const run = Date.now().toString(36).slice(-4);
const name = (who) => `${who}-${run}`;

/** The dot beside `who` in the open chat's member names, and the one before a two-person chat's name in the list. */
const memberDot = (page, who) => page.getByTestId('chat-members').locator(`[data-testid="presence-dot"][data-user-id="${who}"]`);
const listDot = (page, title, who) => page.getByTestId('chat-item').filter({ hasText: title })
  .locator(`[data-testid="presence-dot"][data-user-id="${who}"]`);
/** What the open chat says of `who` under its title: "who: online", "who: last seen …" or "who: offline". */
const said = (page, who) => page.getByTestId('chat-presence').locator(`[data-testid="presence"][data-user-id="${who}"]`);

/** Waits until bob's page shows `who` in `state` everywhere: both dots and the line under the title. */
async function shown(page, title, who, state, timeout = 30_000) {
  await memberDot(page, who).and(page.locator(`[data-state="${state}"]`)).waitFor({ timeout });
  await listDot(page, title, who).and(page.locator(`[data-state="${state}"]`)).waitFor({ timeout });
  await said(page, who).and(page.locator(`[data-state="${state}"]`)).waitFor({ timeout });
}

/**
 * The presence story both suites tell: bob sees alice online; she closes her page and bob sees her
 * offline, last seen when she left, a debounce later; she comes back and hides her presence: offline
 * at once, with no last seen, and still hidden after a reload; shown again, online.
 */
async function presenceStory(alicePages, bobPages, title, prefix, shots) {
  const alice = await alicePages.person(name(`${prefix}-alice`));
  const bob = await bobPages.person(name(`${prefix}-bob`));
  await createChat(alice.page, bob.name, title);
  await send(alice.page, 'are you there?');
  await openChat(bob.page, title);
  await message(bob.page, 'are you there?').waitFor();

  await shown(bob.page, title, alice.name, 'online');
  assert.equal(await said(bob.page, alice.name).textContent(), `${alice.name}: online`);
  assert.equal(await bob.page.getByTestId('chat-members').textContent(), `Members: ${alice.name}, ${bob.name} (you)`,
    'the dots add no text to the member names');
  // and alice sees bob, whose chat she has open
  await memberDot(alice.page, bob.name).and(alice.page.locator('[data-state="online"]')).waitFor();
  await shot(bob.page, `${shots}-1-bob-sees-alice-online.png`);

  const leaving = Date.now();
  await alice.ctx.close();
  await shown(bob.page, title, alice.name, 'offline');
  const seen = said(bob.page, alice.name);
  assert.match(await seen.textContent(), new RegExp(`^${alice.name}: last seen \\d{1,2}:\\d{2}`));
  const at = Date.parse(await seen.locator('time').getAttribute('datetime'));
  assert.ok(at >= leaving - 1000 && at <= Date.now(), `last seen ${new Date(at).toISOString()} is when alice left (${new Date(leaving).toISOString()})`);
  assert.match(await listDot(bob.page, title, alice.name).getAttribute('aria-label'), /^last seen /);
  await shot(bob.page, `${shots}-2-bob-sees-alice-last-seen.png`);

  // back (online again once a debounce has passed since the offline), then hidden
  const back = await alicePages.person(alice.name);
  await shown(bob.page, title, alice.name, 'online');
  const hide = back.page.getByLabel('Hide my presence');
  await hide.check();
  await shown(bob.page, title, alice.name, 'offline');
  assert.equal(await said(bob.page, alice.name).textContent(), `${alice.name}: offline`, 'hidden: no last seen');
  assert.equal(await said(bob.page, alice.name).locator('time').count(), 0);
  await shot(bob.page, `${shots}-3-bob-sees-alice-hidden.png`);

  // the setting is the server's: a reload shows it checked
  await back.page.reload();
  await connection(back.page, 'open');
  await back.page.locator('#hide-presence:checked:enabled').waitFor();
  await hide.uncheck();
  await shown(bob.page, title, alice.name, 'online');
  assert.equal(await said(bob.page, alice.name).textContent(), `${alice.name}: online`);
}

describe('the demo page: typing and presence', { skip: requireBrowser('the awareness tests') }, () => {
  let server;
  let browser;
  let pages;

  before(async () => {
    server = await TestServer.start({ args: [DEBOUNCE] });
    browser = await launch();
    pages = new DemoPages(browser, server.base);
  });

  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  afterEach(() => pages.reset());

  test('one types: the other sees "… is typing", gone when the message arrives and after five quiet seconds', { timeout: 120_000 }, async () => {
    const alice = await pages.person(name('alice'));
    const bob = await pages.person(name('bob'));
    await createChat(alice.page, bob.name, 'typing here');
    await send(alice.page, 'anyone there?');
    await openChat(bob.page, 'typing here');
    await message(bob.page, 'anyone there?').waitFor();

    const aliceSees = alice.page.getByTestId('typing');
    const box = bob.page.getByLabel('Message', { exact: true });
    await box.pressSequentially('yes, I am', { delay: 20 });
    await aliceSees.filter({ hasText: `${bob.name} is typing…` }).waitFor();
    assert.equal(await bob.page.getByTestId('typing').textContent(), '', 'nobody is shown typing to the typist');

    await box.press('Enter');
    await message(alice.page, 'yes, I am').waitFor();
    assert.equal(await aliceSees.textContent(), '', 'the message ends the indicator');

    // typing on: a frame goes out once 3 s have passed since the last one, and the indicator is back
    await Promise.all([
      aliceSees.filter({ hasText: `${bob.name} is typing…` }).waitFor({ timeout: 20_000 }),
      box.pressSequentially(' and more, slowly', { delay: 300 }),
    ]);
    // bob stops without sending: the indicator goes by itself (5 s after the last frame)
    await alice.page.waitForFunction(() => document.querySelector('[data-testid="typing"]').textContent === '', null, { timeout: 15_000 });
    assert.equal(await message(alice.page, 'and more, slowly').count(), 0, 'nothing was sent');
    pages.assertNoProblems();
  });

  test('presence: online while her page is open, "last seen" a debounce after she left, offline at once while hidden', { timeout: 150_000 }, async () => {
    await presenceStory(pages, pages, 'presence here', 'p', 'presence-one-node');
    pages.assertNoProblems();
  });
});

describe('the demo page: presence across two nodes', { skip: requireBrowser('the two-node awareness tests') }, () => {
  let nodes = [];
  let browser;
  let onFirst;
  let onSecond;

  before(async () => {
    nodes = await TestServer.cluster({ args: [DEBOUNCE] });
    browser = await launch();
    onFirst = new DemoPages(browser, nodes[0].base);
    onSecond = new DemoPages(browser, nodes[1].base);
  });

  after(async () => {
    await browser?.close();
    // the second node first: the first one's process holds the PostgreSQL and Redis both use
    for (const node of [...nodes].reverse()) await node.dispose();
  });

  afterEach(() => Promise.all([onFirst.reset(), onSecond.reset()]));

  test('presence crosses nodes: alice on the first, bob on the second sees her online, last seen, hidden and back', { timeout: 180_000 }, async () => {
    await presenceStory(onFirst, onSecond, 'across nodes', 'n', 'presence-two-nodes');
    onFirst.assertNoProblems();
    onSecond.assertNoProblems();
  });
});
