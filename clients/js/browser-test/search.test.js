// The demo page's search (PROTOCOL.md §10): a person searches their chats, sees the results with
// the matched words marked in their snippets, and a click opens the chat at that message, scrolled
// to and marked found; a chat they are not in is never among the results. Debian's Chromium through
// playwright-core, against the packaged server (../test/server.js); every wait is on a condition
// of the page.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { demoSuite, shot, createChat, openChat, send, message, inState } from './page.js';

describe('the demo page: search', { skip: requireBrowser('the search tests') }, () => {
  const suite = demoSuite({ before, after, afterEach }, launch, TestServer);
  const run = Date.now().toString(36).slice(-4);
  const name = (who) => `${who}-${run}`;

  test('a search lists the matches with their words marked, and a result opens its chat at the message', async () => {
    const { pages } = suite;
    const ann = await pages.person(name('ann'));
    const ben = await pages.person(name('ben'));
    const eve = await pages.person(name('eve'));
    await createChat(eve.page, name('fay'), 'not for ann');
    await send(eve.page, 'a cormorant ann must never find');
    await inState(eve.page, message(eve.page, 'a cormorant ann must never find'), 'accepted', 'read').waitFor();

    await createChat(ann.page, ben.name, 'birds');
    const first = 'the cormorant dives at dawn';
    await send(ann.page, first);
    for (let i = 0; i < 30; i++) await send(ann.page, `filler number ${i}`);
    await inState(ann.page, message(ann.page, 'filler number 29'), 'accepted', 'read').waitFor();
    await createChat(ann.page, ben.name, 'other');
    await send(ann.page, 'nothing to see');
    await inState(ann.page, message(ann.page, 'nothing to see'), 'accepted', 'read').waitFor();

    await ben.page.getByLabel('Search your chats').fill('cormorant');
    await ben.page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = ben.page.getByTestId('search-result');
    await results.first().waitFor();
    assert.equal(await results.count(), 1, 'only the chats ben is in');
    assert.match(await results.first().textContent(), /the cormorant dives at dawn/);
    assert.deepEqual(await results.first().locator('mark').allTextContents(), ['cormorant']);
    await shot(ben.page, 'search-results.png');

    await results.first().click();
    await ben.page.locator('#chat-title', { hasText: 'birds' }).waitFor();
    const found = ben.page.locator('[data-testid="message"][data-found="true"]');
    await found.waitFor();
    assert.equal(await found.getByTestId('message-body').textContent(), first);
    // scrolled to: the found message is within the log's visible part
    await ben.page.waitForFunction(() => {
      const el = document.querySelector('[data-testid="message"][data-found="true"]');
      const log = document.querySelector('[data-testid="messages"]');
      if (!el || !log) return false;
      const a = el.getBoundingClientRect();
      const b = log.getBoundingClientRect();
      return a.bottom > b.top && a.top < b.bottom;
    });
    await shot(ben.page, 'search-opened.png');

    // opened again from another chat: the same message is found there
    await openChat(ben.page, 'other');
    await results.first().click();
    await ben.page.locator('#chat-title', { hasText: 'birds' }).waitFor();
    await found.waitFor();
    pages.assertNoProblems();
  });
});
