// The chat list of PROTOCOL.md §10 in the client, against a real server (the packaged jar, see
// server.js): listChats() and getChat() carry unread and lastMessage, and chats() keeps them live
// as entries arrive, as markRead moves and as one's own messages go out (sending is reading).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WaterlineClient } from '../src/index.js';
import { TestServer } from './server.js';
import { until, next } from './wait.js';

let server;
const run = Date.now().toString(36);
const user = (name) => `${name}-${run}`;
const opened = [];

async function started(name) {
  const c = new WaterlineClient({ urls: server.base, token: () => server.token(name) });
  opened.push(c);
  await c.start();
  if (c.state !== 'open') await next(c, 'state', (e) => e.state === 'open');
  return c;
}

const view = (c, chatId) => c.chats().find((v) => v.chatId === chatId);

before(async () => { server = await TestServer.start(); });
after(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await server?.dispose();
});

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
