// Type-checked by tsc against the declarations the installed package exports (package.json
// "exports" → "types"), as an application written in TypeScript would see them.
import { WaterlineClient, WaterlineError, ChatLog, devToken, memoryStore, type Message, type Accepted, type MessageUpdate, type AttachmentDetail, type Presence, type PresenceChange, type Settings } from '@waterline/client';

export async function converse(base: string): Promise<Accepted> {
  const client = new WaterlineClient({ urls: base, token: () => devToken(base, 'alice'), store: memoryStore() });
  const off = client.on('message', (m: Message) => {
    const seq: number = m.seq;
    // @ts-expect-error a message's seq is a number: an untyped (any) import would let this pass, and tsc would fail on the unused directive
    const wrong: string = m.seq;
    console.log(seq, wrong, m.body.toUpperCase());
  });
  await client.start();
  try {
    const chat = await client.createChat(['bob'], 'typed');
    return await client.send(chat.chatId, 'hi');
  } catch (e) {
    if (e instanceof WaterlineError) console.log(e.code);
    throw e;
  } finally {
    off();
    await client.close();
  }
}

/** §9 as an application types it: a reply with an attachment, an edit, a reaction, a delete, and the log's current state. */
export async function change(client: WaterlineClient, chatId: string, file: Blob): Promise<Message | undefined> {
  const off = client.on('update', (u: MessageUpdate) => {
    const counts: Record<string, number> = u.message.reactions ?? {};
    console.log(u.change, u.message.body, counts['👍'] ?? 0, u.message.deleted === true);
  });
  const uploaded: AttachmentDetail = await client.upload(chatId, file, { name: 'photo.png' });
  const first = await client.send(chatId, 'the photo', { attachments: [uploaded.attachmentId] });
  const reply = await client.send(chatId, 'nice', { replyTo: first.messageId });
  await client.edit(chatId, reply.messageId, 'very nice');
  const again: Accepted = await client.react(chatId, first.messageId, '👍', false);
  if (again.unchanged) console.log('nothing to take back');
  await client.deleteMessage(chatId, reply.messageId);
  await client.delete(chatId, first.messageId);
  const bytes: Blob = await client.download(uploaded.attachmentId);
  console.log(bytes.size, client.attachmentUrl(uploaded.attachmentId));
  const log = new ChatLog({ me: client.userId, keep: 50 });
  for (const m of client.messages(chatId)) log.apply(m);
  off();
  // @ts-expect-error react's emoji is a string
  void client.react(chatId, first.messageId, 1);
  return log.get(first.messageId) ?? client.message(chatId, first.messageId);
}

/** §10's presence as an application types it: the event, what is known, a query, the setting. */
export async function presence(client: WaterlineClient, userId: string): Promise<string> {
  const off = client.on('presence', (p: PresenceChange) => {
    const seen: string | null = p.lastSeen;
    console.log(p.userId, p.state === 'online' ? 'online' : `last seen ${seen ?? 'never'}`);
  });
  const known: Presence | undefined = client.presenceOf(userId);
  const asked: Presence = await client.getPresence(userId);
  const mine: Presence = await client.getPresence(client.userId ?? userId);
  const settings: Settings = await client.setPresenceHidden(!(mine.hidden ?? false));
  const read: Settings = await client.getSettings();
  off();
  // @ts-expect-error hidden is a boolean, not the setting's word
  void client.setPresenceHidden('hidden');
  // @ts-expect-error a state is online or offline
  const away: Presence['state'] = 'away';
  return `${known?.state ?? 'unknown'} ${asked.state} ${settings.presence} ${read.presence} ${away}`;
}
