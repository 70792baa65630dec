// The installed package used as an application would: two users of the server at WATERLINE_URL,
// a chat between them, a message from one handed to the other. Prints one JSON line, or exits 1.
import { WaterlineClient, devToken } from '@waterline/client';

const base = process.env.WATERLINE_URL;
const run = Date.now().toString(36);
const [alice, bob] = ['alice', 'bob'].map((name) => {
  const userId = `${name}-${run}`;
  return new WaterlineClient({ urls: base, token: () => devToken(base, userId) });
});
const timer = setTimeout(() => { console.error('no message within 30 s'); process.exit(1); }, 30_000);
const body = `hello from the package ${run}`;
const delivered = new Promise((resolve) => bob.on('message', (m) => { if (m.body === body) resolve(m); }));
await alice.start();
await bob.start();
const chat = await alice.createChat([`bob-${run}`], 'from the package');
const accepted = await alice.send(chat.chatId, body);
const message = await delivered;
clearTimeout(timer);
await Promise.all([alice.close(), bob.close()]);
console.log(JSON.stringify({ chatId: chat.chatId, accepted: accepted.seq, delivered: message.seq, sender: message.senderId }));
