// The client's §9 operations against a real server (the packaged jar, see server.js): edits,
// deletes, reactions and replies hold the same current state on the sender's side (its accepted
// entries), on the other member's (live frames), and on a client that reads it all from history.
// Then §10's chat list, search and presence (the server's presence debounce shortened to 2 s, so
// that an offline is heard within the test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WaterlineClient, WaterlineError } from '../src/index.js';
import { TestServer } from './server.js';
import { until, next } from './wait.js';

let server;
const run = Date.now().toString(36);
const user = (name) => `${name}-${run}`;
const opened = [];

/** A client not started: its REST calls work, and nothing is connected until start(). */
function made(name) {
  const c = new WaterlineClient({ urls: server.base, token: () => server.token(name) });
  c.errors = [];
  c.on('error', (e) => c.errors.push(e));
  opened.push(c);
  return c;
}

async function started(name) {
  const c = made(name);
  await c.start();
  if (c.state !== 'open') await next(c, 'state', (e) => e.state === 'open');
  return c;
}

/** What a page would show: the chat's messages in their current state, the fields that §9 changes. */
function shown(c, chatId) {
  return c.messages(chatId).map((m) => ({ seq: m.seq, body: m.body, kind: m.kind, edited: m.editedAt != null, deleted: m.deleted === true,
    reactions: m.reactions, mine: m.myReactions, replyTo: m.replyTo ?? null, attachments: m.attachments ?? [] }));
}

const DEBOUNCE_MS = 2000;
before(async () => { server = await TestServer.start({ args: [`--waterline.presence.debounce=${DEBOUNCE_MS}ms`] }); });
after(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await server?.dispose();
});

test('edit, react, reply and delete: sender, recipient and a later reader from history hold the same current state', async () => {
  const alice = await started(user('alice'));
  const bob = await started(user('bob'));
  const chat = await alice.createChat([bob.userId], 'entries');
  const updates = [];
  bob.on('update', (u) => updates.push([u.change, u.message.seq]));

  const first = await alice.send(chat.chatId, 'helo');
  const second = await bob.send(chat.chatId, 'hi alice', { replyTo: first.messageId });
  const edit = await alice.edit(chat.chatId, first.messageId, 'hello');
  assert.ok(edit.seq > second.seq, 'an edit is an entry of its own, with its own seq');
  await bob.react(chat.chatId, first.messageId, '👍');
  await alice.react(chat.chatId, first.messageId, '👍');
  await alice.react(chat.chatId, second.messageId, '🎉');
  // a reaction that changes nothing makes no entry: answered with the target's seq
  const again = await alice.react(chat.chatId, second.messageId, '🎉');
  assert.equal(again.unchanged, true);
  assert.equal(again.seq, second.seq);
  const third = await bob.send(chat.chatId, 'oops');
  const gone = await bob.delete(chat.chatId, third.messageId);
  // deleting twice answers the first delete
  const twice = await bob.deleteMessage(chat.chatId, third.messageId);
  assert.equal(twice.seq, gone.seq);
  const head = gone.seq;

  await until([alice, bob], () => alice.cursor(chat.chatId) === head && bob.cursor(chat.chatId) === head, { what: `both at seq ${head}` });
  const expected = (me) => [
    { seq: 1, body: 'hello', kind: 'text', edited: true, deleted: false, reactions: { '👍': 2 }, mine: ['👍'], replyTo: null, attachments: [] },
    { seq: 2, body: 'hi alice', kind: 'text', edited: false, deleted: false, reactions: { '🎉': 1 }, mine: me === 'alice' ? ['🎉'] : [], replyTo: first.messageId, attachments: [] },
    { seq: third.seq, body: '', kind: 'text', edited: false, deleted: true, reactions: {}, mine: [], replyTo: null, attachments: [] },
  ];
  assert.deepEqual(shown(alice, chat.chatId), expected('alice'));
  assert.deepEqual(shown(bob, chat.chatId), expected('bob'));
  assert.deepEqual(updates.map(([change]) => change), ['edit', 'reaction', 'reaction', 'reaction', 'delete']);

  // a second client of bob's with nothing stored reads the whole log from history: the same state
  await bob.close();
  const later = await started(user('bob'));
  await until(later, () => later.cursor(chat.chatId) === head, { what: 'the later reader at the head' });
  assert.deepEqual(shown(later, chat.chatId), expected('bob'));
  // and the server's own answer for one message agrees
  const one = await later.getMessage(chat.chatId, first.messageId);
  assert.equal(one.body, 'hello');
  assert.deepEqual(one.reactions, { '👍': 2 });
});

test('edit and delete of another\'s message are refused as forbidden; nothing changes', async () => {
  const carol = await started(user('carol'));
  const dave = await started(user('dave'));
  const chat = await carol.createChat([dave.userId]);
  const m = await carol.send(chat.chatId, 'mine');
  const failed = [];
  dave.on('failed', (f) => failed.push([f.op, f.code]));
  await assert.rejects(dave.edit(chat.chatId, m.messageId, 'yours now'), (e) => e instanceof WaterlineError && e.code === 'forbidden');
  await assert.rejects(dave.delete(chat.chatId, m.messageId), (e) => e.code === 'forbidden');
  await assert.rejects(dave.react(chat.chatId, '01NOSUCHMESSAGE00000000000', '👍'), (e) => e.code === 'not_found');
  assert.deepEqual(failed, [['edit', 'forbidden'], ['delete', 'forbidden'], ['react', 'not_found']]);
  assert.equal(dave.pending().length, 0);
  const after = await dave.send(chat.chatId, 'still fine');
  await until([carol], () => carol.cursor(chat.chatId) === after.seq, { what: 'carol has dave\'s message' });
  assert.deepEqual(carol.messages(chat.chatId).map((x) => x.body), ['mine', 'still fine']);
});

test('attachments: uploaded, sent, read back by the other member; a delete erases them', async () => {
  const erin = await started(user('erin'));
  const finn = await started(user('finn'));
  const chat = await erin.createChat([finn.userId]);
  const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) % 251);
  const up = await erin.upload(chat.chatId, new Blob([bytes], { type: 'application/x-test' }), { name: 'data.bin' });
  assert.equal(up.size, bytes.length);
  assert.equal(up.contentType, 'application/x-test');
  assert.equal(up.name, 'data.bin');
  // not the other member's to read until it is sent
  await assert.rejects(finn.download(up.attachmentId), (e) => e.status === 404);
  const sent = await erin.send(chat.chatId, '', { attachments: [up.attachmentId] });
  const own = erin.message(chat.chatId, sent.messageId);
  assert.deepEqual(own.attachments, [up.attachmentId]);
  assert.equal(own.attachmentDetails[0].name, 'data.bin', 'the sender holds the details from its upload');
  await until(finn, () => finn.cursor(chat.chatId) === sent.seq, { what: 'finn has the message' });
  const theirs = finn.message(chat.chatId, sent.messageId);
  assert.deepEqual(theirs.attachments, [up.attachmentId]);
  assert.equal(theirs.attachmentDetails?.[0]?.sha256, up.sha256);
  const blob = await finn.download(up.attachmentId);
  assert.deepEqual(new Uint8Array(await blob.arrayBuffer()), bytes);
  // served as a download of no runnable type: a type a browser could run or render is served as octet-stream
  assert.equal(blob.type, 'application/octet-stream');
  assert.equal(theirs.attachmentDetails[0].contentType, 'application/x-test', 'the type uploaded is kept in the details');

  await erin.delete(chat.chatId, sent.messageId);
  await until(finn, () => finn.message(chat.chatId, sent.messageId)?.deleted === true, { what: 'finn sees the delete' });
  assert.deepEqual(finn.message(chat.chatId, sent.messageId).attachments, []);
  await assert.rejects(finn.download(up.attachmentId), (e) => e.status === 404);
  await assert.rejects(erin.download(up.attachmentId), (e) => e.status === 404);
});

/** A chat as chats() shows it now. */
const view = (c, chatId) => c.chats().find((v) => v.chatId === chatId);

// §10: the chat list's unread and lastMessage, from the server and kept live
test('unread and lastMessage: from the server, then live through messages, edits, deletes, markRead and own sends', async () => {
  const alice = await started(user('cl-alice'));
  const chat = await alice.createChat([user('cl-bob')], 'list');
  const one = await alice.send(chat.chatId, 'one');
  await alice.send(chat.chatId, 'two');

  const bob = await started(user('cl-bob'));
  const listed = (await bob.listChats()).find((c) => c.chatId === chat.chatId);
  assert.equal(listed.unread, 2);
  assert.equal(listed.lastMessage.body, 'two');
  await until(bob, () => view(bob, chat.chatId)?.unread === 2 && bob.cursor(chat.chatId) === 2, { pollMs: 50 });
  assert.equal(view(alice, chat.chatId).unread, 0, 'own messages are never unread');

  const three = await alice.send(chat.chatId, 'three');
  await until(bob, () => view(bob, chat.chatId).unread === 3 && view(bob, chat.chatId).lastMessage?.messageId === three.messageId);

  await alice.edit(chat.chatId, three.messageId, 'three, edited');
  await until(bob, () => view(bob, chat.chatId).lastMessage.body === 'three, edited');
  assert.equal(view(bob, chat.chatId).unread, 3, 'an edit is not unread');

  await alice.delete(chat.chatId, three.messageId);
  await until(bob, () => view(bob, chat.chatId).lastMessage.deleted === true);
  assert.equal(view(bob, chat.chatId).unread, 2, 'a deleted message is no longer unread');
  assert.equal(view(bob, chat.chatId).lastMessage.body, '');

  bob.markRead(chat.chatId, one.seq);
  assert.equal(view(bob, chat.chatId).unread, 1);
  await bob.send(chat.chatId, 'reply');
  await until(bob, () => view(bob, chat.chatId).unread === 0 && view(bob, chat.chatId).lastMessage.body === 'reply');
  await until(alice, () => view(alice, chat.chatId).unread === 1);

  // the server agrees with what both kept live
  assert.equal((await bob.getChat(chat.chatId)).unread, 0);
  assert.equal((await alice.getChat(chat.chatId)).unread, 1);
});

// search (PROTOCOL.md §10): a page of the caller's matches, newest first, paged with next, narrowed by
// chatId, with plain-text snippets and their highlights; refusals reject with the server's code
test('search finds the caller\'s messages newest first, pages with next, narrows by chatId and highlights the words', async () => {
  const alice = await started(user('sara'));
  const bob = await started(user('sam'));
  const mallory = await started(user('mal'));
  const one = await alice.createChat([bob.userId], 'one');
  const two = await alice.createChat([bob.userId], 'two');
  const foreign = await mallory.createChat([user('dan')], 'elsewhere');
  const sent = [];
  for (let i = 0; i < 5; i++) {
    sent.push((await alice.send(i % 2 ? two.chatId : one.chatId, `the kestrel ${i} hovers`)).messageId);
  }
  await alice.send(one.chatId, 'nothing to find here');
  await mallory.send(foreign.chatId, 'a kestrel of mallory');

  const first = await bob.search('kestrel', { limit: 3 });
  assert.equal(first.results.length, 3);
  assert.ok(first.next);
  const second = await bob.search('kestrel', { limit: 3, before: first.next });
  assert.equal(second.next, null);
  assert.deepEqual([...first.results, ...second.results].map((r) => r.messageId), [...sent].reverse());

  const hit = first.results[0];
  assert.equal(hit.senderId, alice.userId);
  assert.deepEqual(hit.highlights.map(([a, b]) => hit.snippet.slice(a, b)), ['kestrel']);

  const onlyOne = await alice.search('kestrel', { chatId: one.chatId });
  assert.deepEqual(onlyOne.results.map((r) => r.chatId), [one.chatId, one.chatId, one.chatId]);

  await assert.rejects(mallory.search('kestrel', { chatId: one.chatId }),
    (e) => e instanceof WaterlineError && e.code === 'not_found');
  await assert.rejects(alice.search('   '), (e) => e instanceof WaterlineError && e.code === 'invalid');
  await assert.rejects(alice.search('kestrel', { limit: 101 }), (e) => e instanceof WaterlineError && e.code === 'invalid');
});

// presence (PROTOCOL.md §10): pushed to connected co-members, asked of the server, and hidden
test('presence: a co-member coming and going is pushed, offline a debounce after leaving with lastSeen; presenceOf follows frames and answers', async () => {
  const aliceId = user('pr-alice');
  const alice = made(aliceId);
  const bob = await started(user('pr-bob'));
  // alice makes the chat over REST alone: she is not connected yet
  await alice.createChat([bob.userId], 'presence');
  const heard = [];
  bob.on('presence', (p) => { if (p.userId === aliceId) heard.push(p); });

  // never connected: offline, with no last seen; an answer that changes what bob's client knew is an event
  assert.equal(bob.presenceOf(aliceId), undefined);
  const never = { userId: aliceId, state: 'offline', lastSeen: null };
  assert.deepEqual(await bob.getPresence(aliceId), never);
  assert.deepEqual(bob.presenceOf(aliceId), never);
  assert.deepEqual(heard, [never]);
  await bob.getPresence(aliceId);
  assert.equal(heard.length, 1, 'the same answer again is no event');

  await alice.start();
  await until(bob, () => bob.presenceOf(aliceId)?.state === 'online', { what: 'bob hears alice online' });
  assert.deepEqual(heard.at(-1), { userId: aliceId, state: 'online', lastSeen: null });

  const leaving = Date.now();
  await alice.close();
  await until(bob, () => bob.presenceOf(aliceId)?.state === 'offline', { what: 'bob hears alice offline' });
  const after = Date.now() - leaving;
  const offline = heard.at(-1);
  assert.equal(typeof offline.lastSeen, 'string');
  const seen = Date.parse(offline.lastSeen);
  assert.ok(seen >= leaving - 1000 && seen <= Date.now(), `lastSeen ${offline.lastSeen} is when alice left (${new Date(leaving).toISOString()})`);
  assert.ok(after >= DEBOUNCE_MS - 500, `offline is announced a debounce after leaving, not ${after} ms after`);
  assert.deepEqual(heard.map((p) => p.state), ['offline', 'online', 'offline']);
  assert.deepEqual(bob.presenceOf(aliceId), offline);
  // the server says the same, so asking changes nothing and says nothing
  assert.deepEqual(await bob.getPresence(aliceId), offline);
  assert.equal(heard.length, 3);
});

test('presence: a stranger is refused as not_found; hiding shows one offline without lastSeen at once, showing again online', async () => {
  const carol = await started(user('pr-carol'));
  const dave = await started(user('pr-dave'));
  const eve = made(user('pr-eve'));
  await carol.createChat([dave.userId], 'hidden');
  await assert.rejects(eve.getPresence(carol.userId), (e) => e instanceof WaterlineError && e.code === 'not_found' && e.status === 404);
  assert.equal(eve.presenceOf(carol.userId), undefined, 'a refusal teaches nothing');

  assert.deepEqual(await carol.getSettings(), { presence: 'visible' });
  assert.deepEqual(await carol.getPresence(carol.userId), { userId: carol.userId, state: 'online', lastSeen: null, hidden: false });
  assert.equal((await dave.getPresence(carol.userId)).state, 'online');

  const heard = [];
  dave.on('presence', (p) => { if (p.userId === carol.userId) heard.push(p); });
  assert.deepEqual(await carol.setPresenceHidden(true), { presence: 'hidden' });
  await until(dave, () => heard.length === 1, { what: 'dave hears carol hide' });
  assert.deepEqual(heard[0], { userId: carol.userId, state: 'offline', lastSeen: null });
  assert.deepEqual(await dave.getPresence(carol.userId), { userId: carol.userId, state: 'offline', lastSeen: null });
  assert.deepEqual(await carol.getSettings(), { presence: 'hidden' });
  const own = await carol.getPresence(carol.userId);
  assert.equal(own.hidden, true, 'one\'s own answer says one hides');
  assert.equal(own.state, 'online', 'to oneself, what is announced of one');

  assert.deepEqual(await carol.setPresenceHidden(false), { presence: 'visible' });
  await until(dave, () => heard.length === 2, { what: 'dave hears carol shown again' });
  assert.deepEqual(heard[1], { userId: carol.userId, state: 'online', lastSeen: null });
  assert.equal(carol.presenceOf(carol.userId).hidden, false);
  await assert.rejects(carol.setPresenceHidden('yes'), TypeError);
  assert.deepEqual(await carol.getSettings(), { presence: 'visible' }, 'a refused argument changed nothing');
});
