// Type-checked by tsc against the declarations the installed package exports (package.json
// "exports" → "types"), as an application written in TypeScript would see them.
import { WaterlineClient, WaterlineError, devToken, memoryStore, type Message, type Accepted } from '@waterline/client';

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
