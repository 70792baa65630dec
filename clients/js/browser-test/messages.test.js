// The demo page's messages beyond sending (PROTOCOL.md §9, and §10's chat list: unread badges and
// previews), two people in two browsers: an edit,
// a delete, a reply quoting its original, reactions with their counts, and attachments (an
// image previewed, a file downloaded), each seen by the other live and after a reload, and by a
// member who comes later from history. Debian's Chromium through playwright-core, against the
// packaged server (../test/server.js); every wait is on a condition of the page.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { TestServer } from '../test/server.js';
import { requireBrowser, launch } from './browser.js';
import { DemoPages, connection, shot, createChat, openChat, send, message, inState, logOf, assertConsistent } from './page.js';

/** A real PNG of width × height pixels, red to blue, made here (no file shipped for it). */
function png(width, height) {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, 'ascii');
    data.copy(out, 8);
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const at = y * (1 + width * 3);
    for (let x = 0; x < width; x++) {
      rows[at + 1 + x * 3] = Math.round((255 * (width - 1 - x)) / Math.max(1, width - 1));
      rows[at + 3 + x * 3] = Math.round((255 * x) / Math.max(1, width - 1));
    }
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

describe('the demo page: edit, delete, reply, react, attach', { skip: requireBrowser('the message tests') }, () => {
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

  /** Two people in a new chat, both with it open, one message from the first seen by the second. */
  async function pair(a, b, title, first) {
    const one = await pages.person(name(a));
    const two = await pages.person(name(b));
    await createChat(one.page, two.name, title);
    await send(one.page, first);
    await inState(one.page, message(one.page, first), 'accepted', 'read').waitFor();
    await openChat(two.page, title);
    await message(two.page, first).waitFor();
    return [one, two];
  }

  /** A member added to the open chat (titled title) by page, who then signs in and opens it: all they see comes from history. */
  async function later(page, who, title) {
    await page.getByText('Add a member').click();
    await page.getByLabel("Member's name").fill(name(who));
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByTestId('chat-members').filter({ hasText: name(who) }).waitFor();
    const person = await pages.person(name(who));
    await openChat(person.page, title);
    return person;
  }

  const byId = (page, messageId) => page.locator(`[data-testid="message"][data-message-id="${messageId}"]`);
  const reaction = (bubble, emoji) => bubble.locator(`[data-testid="reaction"][data-emoji="${emoji}"]`);

  /** The reaction buttons of a bubble that have a count: { emoji: [count, pressed] }. */
  async function reactionsOf(bubble) {
    return Object.fromEntries(await bubble.getByTestId('reaction').evaluateAll((els) => els
      .filter((b) => b.dataset.count !== '0')
      .map((b) => [b.dataset.emoji, [Number(b.dataset.count), b.getAttribute('aria-pressed') === 'true']])));
  }

  async function reactionsAre(bubble, expected, what) {
    const want = JSON.stringify(expected);
    for (let i = 0; ; i++) {
      const have = JSON.stringify(await reactionsOf(bubble));
      if (have === want) return;
      // the counts change only on events of the page: waited for through the buttons' attributes
      if (i > 200) assert.fail(`${what}: reactions ${have}, expected ${want}`);
      await bubble.page().waitForFunction(({ id, before }) => {
        const el = document.querySelector(`[data-testid="message"][data-message-id="${id}"]`);
        const now = el ? JSON.stringify(Object.fromEntries([...el.querySelectorAll('[data-testid="reaction"]')]
          .filter((b) => b.dataset.count !== '0').map((b) => [b.dataset.emoji, [Number(b.dataset.count), b.getAttribute('aria-pressed') === 'true']]))) : null;
        return now !== before;
      }, { id: await bubble.getAttribute('data-message-id'), before: have }, { timeout: 30_000 });
    }
  }

  test('the sender edits a message: both pages show the new text, marked edited; no one else may edit it', { timeout: 120_000 }, async () => {
    const [alice, bob] = await pair('ed-alice', 'ed-bob', 'edits', 'helo bob, see you at 5');
    const mine = message(alice.page, 'helo bob, see you at 5');
    const id = await mine.getAttribute('data-message-id');
    // bob's copy of alice's message offers reply and reactions, not edit or delete
    const theirs = byId(bob.page, id);
    assert.equal(await theirs.getByTestId('reply').count(), 1);
    assert.equal(await theirs.getByTestId('edit').count(), 0);
    assert.equal(await theirs.getByTestId('delete').count(), 0);

    await mine.getByTestId('edit').click();
    const box = alice.page.getByLabel('Edit message');
    assert.equal(await box.inputValue(), 'helo bob, see you at 5');
    await box.fill('hello bob, see you at 6');
    await box.press('Enter');
    const edited = byId(alice.page, id);
    await edited.getByTestId('message-body').filter({ hasText: /^hello bob, see you at 6$/ }).waitFor();
    await edited.getByTestId('edited').waitFor();
    assert.equal(await edited.getByTestId('edit-form').count(), 0, 'the edit form closed');
    await shot(alice.page, '30-alice-edited.png');

    await theirs.getByTestId('message-body').filter({ hasText: /^hello bob, see you at 6$/ }).waitFor();
    await theirs.getByTestId('edited').waitFor();
    assert.equal(await message(bob.page, 'helo bob, see you at 5').count(), 0);
    await shot(bob.page, '31-bob-sees-the-edit.png');

    // Escape leaves the text as it was
    await edited.getByTestId('edit').click();
    await alice.page.getByLabel('Edit message').fill('not this');
    await alice.page.getByLabel('Edit message').press('Escape');
    assert.equal(await edited.getByTestId('message-body').textContent(), 'hello bob, see you at 6');

    // after a reload (the client's stored state), and for a member who comes later (history)
    await bob.page.reload();
    await connection(bob.page, 'open');
    await byId(bob.page, id).getByTestId('edited').waitFor();
    assert.equal(await byId(bob.page, id).getByTestId('message-body').textContent(), 'hello bob, see you at 6');
    const carol = await later(alice.page, 'ed-carol', 'edits');
    await byId(carol.page, id).getByTestId('edited').waitFor();
    assert.equal(await byId(carol.page, id).getByTestId('message-body').textContent(), 'hello bob, see you at 6');
    for (const [who, page] of [['alice', alice.page], ['bob', bob.page], ['carol', carol.page]]) {
      const log = await logOf(page);
      assertConsistent(log, who);
      // the edit is no message of its own
      assert.deepEqual(log.map((m) => m.body), ['hello bob, see you at 6'], who);
    }
    pages.assertNoProblems();
  });

  test('the sender deletes a message: both pages show that it was deleted and nothing of it', { timeout: 120_000 }, async () => {
    const [dana, eli] = await pair('del-dana', 'del-eli', 'deletes', 'my card number is 1234');
    await send(dana.page, 'sorry, wrong chat');
    await message(eli.page, 'sorry, wrong chat').waitFor();
    const id = await message(dana.page, 'my card number is 1234').getAttribute('data-message-id');
    const mine = byId(dana.page, id);
    await mine.getByTestId('delete').click();
    // asked first: Keep leaves it
    await dana.page.getByRole('button', { name: 'Keep' }).click();
    assert.equal(await mine.getByTestId('message-body').textContent(), 'my card number is 1234');
    await mine.getByTestId('delete').click();
    await mine.getByTestId('delete-confirm').click();

    for (const [who, page] of [['dana', dana.page], ['eli', eli.page]]) {
      const bubble = byId(page, id);
      await bubble.and(page.locator('[data-deleted="true"]')).waitFor();
      assert.equal(await bubble.getByTestId('deleted-note').isVisible(), true, who);
      assert.equal(await bubble.getByTestId('message-body').textContent(), '', who);
      // a deleted message offers nothing more
      assert.equal(await bubble.getByTestId('message-actions').count(), 0, who);
      assert.equal(await bubble.getByTestId('reaction').count(), 0, who);
      assert.equal(await page.getByText('1234').count(), 0, `${who}: the text is gone from the page`);
    }
    await shot(eli.page, '32-eli-sees-the-delete.png');
    // the chat list's preview does not show it either
    await eli.page.reload();
    await connection(eli.page, 'open');
    await byId(eli.page, id).and(eli.page.locator('[data-deleted="true"]')).waitFor();
    assert.equal(await eli.page.getByText('1234').count(), 0, 'not after a reload either');
    const stored = await eli.page.evaluate(() => JSON.stringify(Object.entries(localStorage)));
    assert.ok(!stored.includes('1234'), 'nothing of the text is kept in the browser');
    assert.deepEqual((await logOf(dana.page)).map((m) => m.body), ['', 'sorry, wrong chat']);
    pages.assertNoProblems();
  });

  test('a reply quotes its original, on both pages, and the quote follows an edit of it', { timeout: 120_000 }, async () => {
    const [fay, gus] = await pair('re-fay', 're-gus', 'replies', 'lunch at noon?');
    await send(fay.page, 'or later');
    await message(gus.page, 'or later').waitFor();
    const original = message(gus.page, 'lunch at noon?');
    await original.getByTestId('reply').click();
    const bar = gus.page.getByTestId('reply-bar');
    await bar.waitFor();
    assert.match(await bar.textContent(), new RegExp(`Replying to ${name('re-fay')}: lunch at noon\\?`));
    // the focus went to the message box, where the answer is written
    assert.equal(await gus.page.evaluate(() => document.activeElement?.id), 'composer-body');
    await send(gus.page, 'noon works');
    assert.equal(await bar.isVisible(), false, 'the reply bar closes once sent');
    for (const [who, page] of [['gus', gus.page], ['fay', fay.page]]) {
      const reply = message(page, 'noon works');
      await reply.getByTestId('reply-quote').waitFor();
      assert.equal(await reply.getByTestId('reply-quote-text').textContent(), 'lunch at noon?', who);
      assert.match(await reply.getByTestId('reply-quote').textContent(), new RegExp(who === 'fay' ? '^In reply to You' : `^In reply to ${name('re-fay')}`));
    }
    await shot(fay.page, '33-fay-sees-the-reply.png');

    // a reply can be cancelled
    await message(gus.page, 'or later').getByTestId('reply').click();
    await gus.page.getByRole('button', { name: 'Cancel the reply' }).click();
    await send(gus.page, 'not a reply');
    await message(fay.page, 'not a reply').waitFor();
    assert.equal(await message(fay.page, 'not a reply').getByTestId('reply-quote').count(), 0);

    // the original edited: the quote shows its new text
    await message(fay.page, 'lunch at noon?').getByTestId('edit').click();
    await fay.page.getByLabel('Edit message').fill('lunch at 1?');
    await fay.page.getByLabel('Edit message').press('Enter');
    await message(gus.page, 'noon works').getByTestId('reply-quote-text').filter({ hasText: /^lunch at 1\?$/ }).waitFor();
    // and after a reload, from what the client kept
    await gus.page.reload();
    await connection(gus.page, 'open');
    await message(gus.page, 'noon works').getByTestId('reply-quote-text').filter({ hasText: /^lunch at 1\?$/ }).waitFor();
    pages.assertNoProblems();
  });

  test('reactions: counts on both pages, one\'s own pressed, taken back by pressing again', { timeout: 120_000 }, async () => {
    const [hana, ivan] = await pair('rx-hana', 'rx-ivan', 'reactions', 'party on friday');
    const id = await message(hana.page, 'party on friday').getAttribute('data-message-id');
    const onHana = byId(hana.page, id);
    const onIvan = byId(ivan.page, id);
    // the four offered, none counted yet
    assert.deepEqual(await onIvan.getByTestId('reaction').evaluateAll((els) => els.map((b) => b.dataset.emoji)), ['👍', '❤️', '😂', '🎉']);
    assert.deepEqual(await reactionsOf(onIvan), {});

    await reaction(onIvan, '🎉').click();
    await reactionsAre(onIvan, { '🎉': [1, true] }, 'ivan after his 🎉');
    await reactionsAre(onHana, { '🎉': [1, false] }, 'hana sees ivan\'s 🎉');
    await reaction(onHana, '🎉').click();
    await reaction(onHana, '❤️').click();
    await reactionsAre(onHana, { '❤️': [1, true], '🎉': [2, true] }, 'hana after her own');
    await reactionsAre(onIvan, { '❤️': [1, false], '🎉': [2, true] }, 'ivan sees hana\'s');
    await shot(ivan.page, '34-ivan-reactions.png');

    // pressed again: taken back
    await reaction(onIvan, '🎉').click();
    await reaction(onIvan, '😂').click();
    await reactionsAre(onIvan, { '❤️': [1, false], '😂': [1, true], '🎉': [1, false] }, 'ivan took his 🎉 back');
    await reactionsAre(onHana, { '❤️': [1, true], '😂': [1, false], '🎉': [1, true] }, 'hana sees it taken back');
    assert.equal(await reaction(onHana, '🎉').getAttribute('aria-label'), '🎉 1 reaction, yours');
    await shot(hana.page, '35-hana-reactions.png');

    // the same after a reload, and for a member who comes later (history: counts, and none of them theirs)
    await hana.page.reload();
    await connection(hana.page, 'open');
    await reactionsAre(byId(hana.page, id), { '❤️': [1, true], '😂': [1, false], '🎉': [1, true] }, 'hana after a reload');
    const jo = await later(hana.page, 'rx-jo', 'reactions');
    await reactionsAre(byId(jo.page, id), { '❤️': [1, false], '😂': [1, false], '🎉': [1, false] }, 'jo, from history');
    // the reactions are no messages of their own
    assert.deepEqual((await logOf(jo.page)).map((m) => m.body), ['party on friday']);
    pages.assertNoProblems();
  });

  test('attachments: an image is previewed and a file downloads, on the other\'s page; deleted, both are gone', { timeout: 150_000 }, async () => {
    const [kai, lea] = await pair('at-kai', 'at-lea', 'files', 'files are coming');
    const image = png(48, 32);
    const notes = 'Notes for the trip:\n- tickets ✓\n- zoë\'s address\n';
    await kai.page.getByLabel('Attach files').setInputFiles([
      { name: 'gradient.png', mimeType: 'image/png', buffer: image },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(notes) },
    ]);
    // both uploaded before the message goes
    await kai.page.locator('[data-testid="composer-file"][data-state="ready"]').nth(1).waitFor();
    assert.equal(await kai.page.locator('[data-testid="composer-file"]').count(), 2);
    await send(kai.page, 'the map and the notes');
    assert.equal(await kai.page.locator('[data-testid="composer-file"]').count(), 0, 'the composer is cleared');

    for (const [who, page] of [['kai', kai.page], ['lea', lea.page]]) {
      const bubble = message(page, 'the map and the notes');
      // the preview is the uploaded image, fetched with the token and shown from a data: URL (once accepted)
      const img = bubble.getByTestId('attachment-image');
      await img.waitFor();
      assert.equal(await bubble.getByTestId('attachment').count(), 2, who);
      await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle(), { timeout: 30_000 });
      assert.deepEqual(await img.evaluate((el) => [el.naturalWidth, el.naturalHeight, el.alt, el.src.slice(0, 22)]),
        [48, 32, 'gradient.png', 'data:image/png;base64,'], who);
      // the text file has no preview: a download button only
      const items = await bubble.getByTestId('attachment').evaluateAll((els) => els.map((e) => [e.querySelector('img') != null,
        e.querySelector('[data-testid="attachment-download"]')?.textContent]));
      assert.deepEqual(items, [[true, `⬇ gradient.png (${image.length} B)`], [false, `⬇ notes.txt (${Buffer.byteLength(notes)} B)`]], who);
    }
    await shot(lea.page, '36-lea-sees-the-image.png');

    // lea downloads both: the bytes are the ones uploaded
    const bubble = message(lea.page, 'the map and the notes');
    for (const [i, file, bytes] of [[1, 'notes.txt', Buffer.from(notes)], [0, 'gradient.png', image]]) {
      const [download] = await Promise.all([
        lea.page.waitForEvent('download', { timeout: 30_000 }),
        bubble.getByTestId('attachment-download').nth(i).click(),
      ]);
      assert.equal(download.suggestedFilename(), file);
      assert.deepEqual(await readFile(await download.path()), bytes, `${file} downloaded whole`);
    }

    // a message of files alone, with no text
    await kai.page.getByLabel('Attach files').setInputFiles({ name: 'small.png', mimeType: 'image/png', buffer: png(8, 8) });
    await kai.page.locator('[data-testid="composer-file"][data-state="ready"]').waitFor();
    await kai.page.getByRole('button', { name: 'Send' }).click();
    const alone = lea.page.getByTestId('message').filter({ has: lea.page.locator('img[alt="small.png"]') });
    await alone.waitFor();
    assert.equal(await alone.getByTestId('message-body').isVisible(), false);

    // the first one deleted: the files are gone from both pages, and from the server
    const id = await message(kai.page, 'the map and the notes').getAttribute('data-message-id');
    const attachmentIds = await byId(kai.page, id).getByTestId('attachment').evaluateAll((els) => els.map((e) => e.dataset.attachmentId));
    await byId(kai.page, id).getByTestId('delete').click();
    await byId(kai.page, id).getByTestId('delete-confirm').click();
    for (const page of [kai.page, lea.page]) {
      await byId(page, id).and(page.locator('[data-deleted="true"]')).waitFor();
      assert.equal(await byId(page, id).getByTestId('attachment').count(), 0);
    }
    const token = await server.token(lea.name);
    for (const attachmentId of attachmentIds) {
      const res = await fetch(`${server.base}/api/attachments/${encodeURIComponent(attachmentId)}`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 404, `attachment ${attachmentId} after the delete`);
    }
    await shot(lea.page, '37-lea-after-the-delete.png');
    pages.assertNoProblems();
  });

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
