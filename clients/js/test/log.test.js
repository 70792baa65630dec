// The chat log's application of entries (PROTOCOL.md §9), without a server: duplicates, any
// order of arrival, deletes erasing, reactions counted per user, unknown kinds kept in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatLog } from '../src/index.js';

const at = (s) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const text = (seq, body, extra = {}) => ({ messageId: `m${seq}`, correlationId: `c${seq}`, chatId: 'c', seq, senderId: 'alice', body, sentAt: at(seq), kind: 'text', ...extra });
const edit = (seq, targetSeq, body, by = 'alice') => ({ messageId: `m${seq}`, chatId: 'c', seq, senderId: by, body, sentAt: at(seq), kind: 'edit', targetId: `m${targetSeq}` });
const del = (seq, targetSeq, by = 'alice') => ({ messageId: `m${seq}`, chatId: 'c', seq, senderId: by, body: '', sentAt: at(seq), kind: 'delete', targetId: `m${targetSeq}` });
const react = (seq, targetSeq, by, emoji, on = true) => ({ messageId: `m${seq}`, chatId: 'c', seq, senderId: by, body: '', sentAt: at(seq), kind: 'reaction', targetId: `m${targetSeq}`, emoji, on });

function state(log) {
  return log.messages().map((m) => ({ seq: m.seq, kind: m.kind, body: m.body, ...(m.deleted ? { deleted: true } : {}),
    ...(m.editedAt ? { editedAt: m.editedAt } : {}), ...(Object.keys(m.reactions ?? {}).length ? { reactions: m.reactions } : {}),
    ...(m.myReactions?.length ? { myReactions: m.myReactions } : {}), ...(m.attachments?.length ? { attachments: m.attachments } : {}) }));
}

/** Every permutation of a small list (for "any order of arrival"). */
function permutations(list) {
  if (list.length <= 1) return [list];
  return list.flatMap((x, i) => permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((rest) => [x, ...rest]));
}

test('a message is held in its current state: the last edit\'s body, its time, and the reactions counted by user', () => {
  const log = new ChatLog({ me: 'bob' });
  const handed = [text(1, 'helo'), edit(2, 1, 'hello'), react(3, 1, 'bob', '👍'), react(4, 1, 'carol', '👍'), react(5, 1, 'carol', '🎉'),
    edit(6, 1, 'hello, all'), react(7, 1, 'carol', '🎉', false)].map((e) => log.apply(e));
  assert.deepEqual(state(log), [{ seq: 1, kind: 'text', body: 'hello, all', editedAt: at(6), reactions: { '👍': 2 }, myReactions: ['👍'] }]);
  // each change says which message it changed, in its new state; the last one (🎉 taken back) too
  assert.deepEqual(handed.map((h) => h.updated.map((m) => m.messageId)), [[], ['m1'], ['m1'], ['m1'], ['m1'], ['m1'], ['m1']]);
  assert.deepEqual(handed[6].updated[0].reactions, { '👍': 2 });
  // the changes are handed over as entries, but not held as messages
  assert.equal(handed[1].entry.kind, 'edit');
  assert.equal(log.size, 1);
});

test('an entry delivered twice applies once, whatever came between', () => {
  const log = new ChatLog({ me: 'alice' });
  const entries = [text(1, 'a'), react(2, 1, 'bob', '👍'), react(3, 1, 'bob', '👍', false), react(4, 1, 'bob', '👍'), edit(5, 1, 'b')];
  for (const e of entries) log.apply(e);
  const before = state(log);
  // re-delivered: the message, an older "on" after its "off" (and after the newer "on"), the edit
  for (const e of [entries[0], entries[1], entries[3], entries[2], entries[4], entries[1]]) {
    const again = log.apply(e);
    assert.equal(again.entry, null, `m${e.seq} is a duplicate`);
    assert.deepEqual(again.updated, []);
  }
  assert.deepEqual(state(log), before);
  assert.deepEqual(before, [{ seq: 1, kind: 'text', body: 'b', editedAt: at(5), reactions: { '👍': 1 } }]);
  // a message with the seq of one held, under another id, is the same entry (seq is identity in a chat)
  assert.equal(log.apply({ ...text(1, 'other'), messageId: 'mX' }).entry, null);
  assert.equal(log.messages()[0].body, 'b');
});

test('the end state does not depend on the order the entries arrive in; a change before its target waits for it', () => {
  const entries = [text(1, 'one'), edit(2, 1, 'one!'), react(3, 1, 'bob', '❤️'), react(4, 1, 'carol', '❤️'), react(5, 1, 'bob', '❤️', false),
    edit(6, 1, 'one!!'), text(7, 'two', { replyTo: 'm1' }), react(8, 7, 'bob', '😂')];
  const expected = [
    { seq: 1, kind: 'text', body: 'one!!', editedAt: at(6), reactions: { '❤️': 1 } },
    { seq: 7, kind: 'text', body: 'two', reactions: { '😂': 1 }, myReactions: ['😂'] },
  ];
  let orders = 0;
  // all 40320 orders of the eight would be slow to build as lists: every rotation and reversal, and random shuffles
  const tried = [];
  for (let r = 0; r < entries.length; r++) {
    const rotated = [...entries.slice(r), ...entries.slice(0, r)];
    tried.push(rotated, [...rotated].reverse());
  }
  let seed = 7;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (let i = 0; i < 300; i++) {
    const shuffled = [...entries];
    for (let j = shuffled.length - 1; j > 0; j--) {
      const k = Math.floor(random() * (j + 1));
      [shuffled[j], shuffled[k]] = [shuffled[k], shuffled[j]];
    }
    tried.push(shuffled);
  }
  for (const order of tried) {
    const log = new ChatLog({ me: 'bob' });
    for (const e of order) log.apply(e);
    assert.deepEqual(state(log), expected, `order ${order.map((e) => e.seq).join(',')}`);
    assert.equal(log.get('m7').replyTo, 'm1');
    orders++;
  }
  // a smaller case exhaustively: a message, its delete and an edit, all six orders
  for (const order of permutations([text(1, 'x', { attachments: ['a1'] }), edit(2, 1, 'y'), del(3, 1)])) {
    const log = new ChatLog();
    for (const e of order) log.apply(e);
    assert.deepEqual(state(log), [{ seq: 1, kind: 'text', body: '', deleted: true }], `order ${order.map((e) => e.seq).join(',')}`);
    orders++;
  }
  assert.ok(orders > 300);
});

test('a delete erases the body, the attachments and the reactions, for good; later edits and reactions change nothing', () => {
  const log = new ChatLog({ me: 'alice' });
  const details = [{ attachmentId: 'a1', contentType: 'image/png', size: 3, name: 'p.png', sha256: 'ab' }];
  log.apply(text(1, 'a photo', { attachments: ['a1'], attachmentDetails: details }));
  log.apply(react(2, 1, 'bob', '🎉'));
  log.apply(edit(3, 1, 'a photo of the cat'));
  const gone = log.apply(del(4, 1));
  assert.equal(gone.updated.length, 1);
  const m = gone.updated[0];
  assert.equal(m.deleted, true);
  assert.equal(m.body, '');
  assert.deepEqual(m.attachments, []);
  assert.deepEqual(m.attachmentDetails, []);
  assert.deepEqual(m.reactions, {});
  for (const e of [edit(5, 1, 'back?'), react(6, 1, 'bob', '👍'), del(7, 1)]) assert.deepEqual(log.apply(e).updated, [], `m${e.seq}`);
  assert.deepEqual(state(log), [{ seq: 1, kind: 'text', body: '', deleted: true }]);
  // nothing of the text is left in what a store would keep
  const stored = JSON.stringify(log.toJSON());
  for (const word of ['photo', 'cat', 'p.png', 'back?']) assert.ok(!stored.includes(word), `${word} is erased from ${stored}`);
});

test('a history page\'s current state is taken, and its reaction counts are not added to the reaction entries', () => {
  // the page was read after m2..m5 were committed: it shows their effect already
  const page = [
    text(1, 'hello, all', { editedAt: at(4), reactions: { '👍': 2 }, myReactions: ['👍'] }),
    react(2, 1, 'bob', '👍'), edit(3, 1, 'hello'), edit(4, 1, 'hello, all'), react(5, 1, 'carol', '👍'),
    text(6, '', { deleted: true, attachments: [] }), del(7, 6),
  ];
  const log = new ChatLog({ me: 'bob' });
  for (const e of page) log.apply(e);
  assert.deepEqual(state(log), [
    { seq: 1, kind: 'text', body: 'hello, all', editedAt: at(4), reactions: { '👍': 2 }, myReactions: ['👍'] },
    { seq: 6, kind: 'text', body: '', deleted: true },
  ]);
  // an edit older than the page's state, handed over after it, does not take the body back
  const older = new ChatLog();
  older.apply(text(1, 'third', { editedAt: at(9) }));
  older.apply(edit(5, 1, 'second'));
  assert.equal(older.get('m1').body, 'third');
  older.apply(edit(9, 1, 'third'));
  older.apply(edit(12, 1, 'fourth'));
  assert.equal(older.get('m1').body, 'fourth');
});

test('entries of a kind this client does not know are kept in their place and change nothing', () => {
  const log = new ChatLog();
  log.apply(text(1, 'a'));
  log.apply({ messageId: 'm2', chatId: 'c', seq: 2, senderId: 'admin', body: '', sentAt: at(2), kind: 'member', member: { userId: 'dan', change: 'joined' } });
  log.apply({ messageId: 'm3', chatId: 'c', seq: 3, senderId: 'x', body: '?', sentAt: at(3), kind: 'poll', targetId: 'm1' });
  log.apply(text(4, 'b'));
  assert.deepEqual(log.messages().map((m) => [m.seq, m.kind]), [[1, 'text'], [2, 'member'], [3, 'poll'], [4, 'text']]);
  assert.equal(log.get('m1').body, 'a');
  assert.deepEqual(log.get('m2').member, { userId: 'dan', change: 'joined' });
});

test('what toJSON keeps restores the same state, and goes on applying entries idempotently', () => {
  const log = new ChatLog({ me: 'bob', keep: 3 });
  for (const e of [text(1, 'a'), text(2, 'b'), react(3, 2, 'bob', '👍'), text(4, 'c'), text(5, 'd'), edit(6, 5, 'd!')]) log.apply(e);
  // keep: 3 messages; the oldest went, and a change to it waits for nothing
  assert.deepEqual(log.messages().map((m) => m.seq), [2, 4, 5]);
  assert.deepEqual(log.apply(edit(7, 1, 'gone')).updated, []);
  const restored = new ChatLog({ me: 'bob', keep: 3, records: JSON.parse(JSON.stringify(log.toJSON())) });
  assert.deepEqual(state(restored), state(log));
  // the per-user state came along: bob's 👍 again changes nothing, his taking it back does
  assert.deepEqual(restored.apply(react(3, 2, 'bob', '👍')).updated, []);
  assert.deepEqual(restored.apply(react(8, 2, 'bob', '👍', false)).updated[0].reactions, {});
  // and an earlier version's stored messages (every entry as it came, changes among them) are read as entries
  const old = new ChatLog({ records: [text(1, 'x'), edit(2, 1, 'y'), react(3, 1, 'bob', '🎉')] });
  assert.deepEqual(state(old), [{ seq: 1, kind: 'text', body: 'y', editedAt: at(2), reactions: { '🎉': 1 } }]);
});

test('the views handed out are copies: changing one changes nothing held', () => {
  const log = new ChatLog();
  const { entry } = log.apply(text(1, 'a', { attachments: ['a1'] }));
  entry.body = 'changed';
  entry.attachments.push('a2');
  log.messages()[0].reactions['👍'] = 9;
  assert.deepEqual(state(log), [{ seq: 1, kind: 'text', body: 'a', attachments: ['a1'] }]);
});
