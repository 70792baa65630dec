// A conversation load run with the JavaScript client, in the shape of the Java load generator's
// (load-tests, LoadRun): users paired into chats (pairwise) or in groups, sends offered at a
// fixed total rate for a duration, optionally the server killed and restarted part-way, then a
// drain and the same reconciliation (reconcile.js, held to the same cases as the Java one).
// On top of what the Java generator checks, the application's side is judged too: every
// message handed over once (appDuplicates) and each chat's messages in seq order with no gap
// (orderViolations), since that is what this client promises its application.
import { WaterlineClient } from '../src/index.js';
import { reconcile } from './reconcile.js';
import { until } from '../test/wait.js';

function groupsOf(list, size) {
  const out = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

async function withTimeout(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([promise, new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms); })]);
  } finally { clearTimeout(timer); }
}

export async function readHistory(client, chatId) {
  const ids = [];
  let since = null;
  for (;;) {
    const page = await client.rest('GET', `/api/chats/${encodeURIComponent(chatId)}/messages?limit=1000${since ? `&since=${since}` : ''}`);
    for (const m of page.messages) ids.push(m);
    if (!page.hasMore || page.messages.length === 0) return ids;
    since = page.messages[page.messages.length - 1].messageId;
  }
}

/**
 * @param {object} o urls, token(userId) → Promise<string>, users, pattern ('pairwise' | 'groups'),
 *   groupSize, rate (sends/s, all users), durationMs, payload (body chars), killAt (ms into the
 *   load) with onKill(), drainMs, prefix (user id prefix), clientOptions
 */
export async function runConversation(o) {
  const { urls, token, users = 10, pattern = 'pairwise', groupSize = 5, rate = 50, durationMs = 5000, payload = 100,
    killAt = null, onKill = null, drainMs = 120_000, prefix = `u${Date.now().toString(36)}`, clientOptions = {} } = o;
  const ids = Array.from({ length: users }, (_, i) => `${prefix}-${i}`);
  const clients = new Map();
  const received = new Map();
  const lastSeen = new Map();
  const order = { violations: 0, first: null };
  for (const id of ids) {
    const c = new WaterlineClient({ urls, token: () => token(id), ...clientOptions });
    received.set(id, new Map());
    c.on('message', (m) => {
      const key = `${id}|${m.chatId}`;
      const prev = lastSeen.get(key) ?? 0;
      if (m.seq !== prev + 1) {
        order.violations++;
        order.first ??= { user: id, chatId: m.chatId, after: prev, got: m.seq };
      }
      lastSeen.set(key, m.seq);
      if (m.senderId !== id) {
        const r = received.get(id);
        r.set(m.messageId, (r.get(m.messageId) ?? 0) + 1);
      }
    });
    c.on('error', () => { /* counted by the client; a run is judged by its reconciliation */ });
    clients.set(id, c);
  }
  const all = [...clients.values()];
  await Promise.all(all.map((c) => c.start()));
  await until(all, () => all.every((c) => c.state === 'open'), { timeoutMs: 60_000, what: 'every client open' });

  const chats = [];
  for (const g of groupsOf(ids, pattern === 'pairwise' ? 2 : groupSize)) {
    if (g.length < 2) continue;
    const c = await clients.get(g[0]).createChat(g.slice(1), 'load');
    chats.push({ chatId: c.chatId, members: c.members });
  }
  const chatOf = new Map();
  for (const ch of chats) for (const m of ch.members) chatOf.set(m, ch);
  const senders = ids.filter((id) => chatOf.has(id));

  const accepted = [];
  const failures = [];
  const sends = [];
  const body = 'x'.repeat(Math.max(1, payload));
  const cpuStart = process.cpuUsage();
  const t0 = performance.now();
  let offered = 0;
  let killed = null;
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - t0;
      if (killAt != null && !killed && elapsed >= killAt) killed = Promise.resolve().then(onKill);
      const due = Math.floor((rate * Math.min(elapsed, durationMs)) / 1000);
      while (offered < due) {
        const from = senders[offered % senders.length];
        const ch = chatOf.get(from);
        sends.push(clients.get(from).send(ch.chatId, body).then(
          (a) => accepted.push({ messageId: a.messageId, chatId: a.chatId, senderId: from, recipients: ch.members.filter((m) => m !== from), seq: a.seq }),
          (e) => failures.push({ from, code: e.code, message: e.message })));
        offered++;
      }
      if (elapsed >= durationMs) { clearInterval(tick); resolve(); }
    }, 10);
  });
  const loadEndedMs = performance.now() - t0;
  if (killed) await killed;
  await withTimeout(Promise.all(sends), drainMs, 'every send answered');
  const top = new Map();
  for (const a of accepted) top.set(a.chatId, Math.max(top.get(a.chatId) ?? 0, a.seq));
  // a member that never catches up is not an error of the run but its finding: the verdict names
  // what it lacks (G3), as the Java generator's does
  let caughtUp = true;
  await until(all, () => {
    for (const ch of chats) for (const m of ch.members) if (clients.get(m).cursor(ch.chatId) < (top.get(ch.chatId) ?? 0)) return { ok: false, behind: m, chat: ch.chatId };
    return true;
  }, { timeoutMs: drainMs, what: 'every member caught up' }).catch(() => { caughtUp = false; });
  const drainedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpuStart);

  const history = new Map();
  for (const ch of chats) history.set(ch.chatId, new Set((await readHistory(clients.get(ch.members[0]), ch.chatId)).map((m) => m.messageId)));
  const held = new Map([...received].map(([u, counts]) => [u, new Set(counts.keys())]));
  const verdict = reconcile(accepted, history, held, received);
  let appDuplicates = 0;
  for (const counts of received.values()) for (const n of counts.values()) if (n > 1) appDuplicates += n - 1;
  const stats = all.map((c) => c.stats());
  const sum = (k) => stats.reduce((s, x) => s + x[k], 0);
  await Promise.all(all.map((c) => c.close()));
  return {
    users, chats: chats.length, offered, accepted: accepted.length, failures, verdict, appDuplicates, order, caughtUp,
    wireDuplicates: sum('duplicates'), delivered: sum('delivered'), acked: sum('acked'), resent: sum('resent'), retried: sum('retried'),
    historyPages: sum('historyPages'), connects: sum('connects'), welcomes: sum('welcomes'),
    loadEndedMs, drainedMs, cpuMicros: cpu.user + cpu.system,
  };
}
