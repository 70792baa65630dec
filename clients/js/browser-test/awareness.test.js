// The demo page's awareness (PROTOCOL.md §10), two people in two browsers: "… is typing" shown
// while the other types, gone when their message arrives or after five quiet seconds. Debian's
// Chromium through playwright-core, against the packaged server (../test/server.js); every wait
// is on a condition of the page.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { DemoPages, createChat, openChat, send, message } from './page.js';

describe('the demo page: typing', { skip: requireBrowser('the awareness tests') }, () => {
  let server;
  let browser;
  let pages;
  const run = Date.now().toString(36).slice(-4);
  const name = (who) => `${who}-${run}`;

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
});
