// Waterline's JavaScript client: see index.d.ts for the API and README.md for the contract it keeps.
import { WaterlineError } from './client.js';

export { WaterlineClient, WaterlineError, RETRIABLE, tokenSubject } from './client.js';
export { memoryStore, localStorageStore, indexedDbStore } from './stores.js';
export { ChatLog, isChange } from './log.js';
export { fullJitter } from './backoff.js';
export { readEventStream } from './sse.js';

/** Asks a server in the zero-configuration mode for a dev token (POST /api/dev/tokens); 404 elsewhere. */
export async function devToken(baseUrl, userId, { fetch = globalThis.fetch } = {}) {
  const res = await fetch(new URL('/api/dev/tokens', baseUrl), {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ userId }),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new WaterlineError(json.error ?? `http_${res.status}`, json.message ?? 'no dev token', { status: res.status });
  return json.token;
}
