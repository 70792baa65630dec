// The demo page's chat list (PROTOCOL.md §10), two people in two browsers: the unread badge and
// the preview of the last message come from the server's chat list and follow new messages and
// deletes live, survive a reload, and the badge goes once the chat is read. Debian's Chromium
// through playwright-core, against the packaged server (../test/server.js); every wait is on a
// condition of the page.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { DemoPages, connection, shot, createChat, openChat, send, message, inState } from './page.js';

describe('the demo page: the chat list', { skip: requireBrowser('the chat list tests') }, () => {
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

  test('unread badges and previews follow messages and deletes, survive a reload, and go once read', { timeout: 120_000 }, async () => {
    const fay = await pages.person(name('list-fay'));
    const gus = await pages.person(name('list-gus'));
    await createChat(fay.page, gus.name, 'tally');
    await send(fay.page, 'first of two');
    await send(fay.page, 'second of two');
    await inState(fay.page, message(fay.page, 'second of two'), 'accepted', 'read').waitFor();

    const item = gus.page.getByTestId('chat-item').filter({ hasText: 'tally' });
    await item.getByTestId('unread').filter({ hasText: /^2 unread$/ }).waitFor();
    await item.locator('.chat-preview').filter({ hasText: `${fay.name}: second of two` }).waitFor();
    await shot(gus.page, '40-gus-has-two-unread.png');

    const id = await message(fay.page, 'second of two').getAttribute('data-message-id');
    const bubble = fay.page.locator(`[data-testid="message"][data-message-id="${id}"]`);
    await bubble.getByTestId('delete').click();
    await bubble.getByTestId('delete-confirm').click();
    await item.getByTestId('unread').filter({ hasText: /^1 unread$/ }).waitFor();
    await item.locator('.chat-preview').filter({ hasText: `${fay.name}: a deleted message` }).waitFor();
    assert.equal(await gus.page.getByText('second of two').count(), 0, 'nothing of the deleted text in the list');

    // after a reload the list is the server's (§10), and says the same
    await gus.page.reload();
    await connection(gus.page, 'open');
    await item.getByTestId('unread').filter({ hasText: /^1 unread$/ }).waitFor();
    await item.locator('.chat-preview').filter({ hasText: `${fay.name}: a deleted message` }).waitFor();

    await openChat(gus.page, 'tally');
    await message(gus.page, 'first of two').waitFor();
    await send(gus.page, 'read them');
    await item.locator('.chat-preview').filter({ hasText: 'You: read them' }).waitFor();
    assert.equal(await item.getByTestId('unread').count(), 0, 'an open chat shows no badge');
    await fay.page.getByTestId('chat-item').filter({ hasText: 'tally' }).locator('.chat-preview')
      .filter({ hasText: `${gus.name}: read them` }).waitFor();
    pages.assertNoProblems();
  });
});
