// The Waterline client: PROTOCOL.md §4's client contract (reconnect, resync, dedupe, order, ack,
// idempotent retry) and §6's streams, for browsers and Node 20+, with no dependencies.
//
// Design note, the delivery loop. For each chat the client keeps a cursor: the highest seq it
// has handed to the application with every seq below it handed too, and that message's id.
// Everything that arrives (a live `message` frame, a history page, the `accepted` of an own
// send) goes into the chat's held map by seq; the map drains while it holds cursor + 1. So:
//   - a duplicate (seq at or below the cursor, or already held) is dropped, never handed twice;
//   - a message past a gap waits until the gap fills; if no live frame fills it within
//     gapWaitMs, history is read from the cursor (`since=` its messageId), which must hold it,
//     because a delivered seq was committed and seq is gap-free in commit order;
//   - on every (re)connect each chat whose lastSeq (from the chat list) is past its cursor is
//     read from history, page by page until hasMore is false, while live frames keep arriving
//     into the same map; whichever copy comes first wins, the other is a duplicate.
// Acks are sent on receipt (batched), not on hand-over: the server only needs to know that the
// frame arrived; what the application has seen is the cursor, which is what a reload resumes
// from. The cursor and the chat's recent messages are stored together under one key, so a store
// never holds a cursor without the messages it covers.

import { Emitter } from './emitter.js';
import { fullJitter, delay } from './backoff.js';
import { memoryStore } from './stores.js';
import { readEventStream } from './sse.js';
import { ChatLog } from './log.js';

/** Send errors that mean "not accepted, try again later" (PROTOCOL.md §3). */
export const RETRIABLE = Object.freeze(['overloaded', 'rate_limited', 'unavailable']);
const RETRY = new Set(RETRIABLE);
/** Send errors that mean "never": the send is dropped and reported failed. */
const FINAL = new Set(['invalid', 'too_large', 'not_found', 'forbidden']);
const UNKNOWN_CODE_RETRIES = 5;
const OPEN = 1;
/** A client sends typing at most this often per chat (PROTOCOL.md §10). */
const TYPING_EVERY_MS = 3000;
/** How long another member's typing frame is shown (PROTOCOL.md §10). */
const TYPING_SHOWN_MS = 5000;
/** A typing frame this soon after a message from the same member is taken as overtaken by it. */
const TYPING_LATE_MS = 1000;

export class WaterlineError extends Error {
  constructor(code, message, details = {}) {
    super(message || code);
    this.name = 'WaterlineError';
    this.code = code;
    Object.assign(this, details);
  }
}

const DEFAULTS = Object.freeze({
  backoffInitialMs: 250,
  backoffMaxMs: 10_000,
  sendRetryInitialMs: 200,
  sendRetryMaxMs: 10_000,
  connectTimeoutMs: 10_000,
  sendTimeoutMs: 30_000,
  ackDelayMs: 20,
  ackBatch: 256,
  gapWaitMs: 500,
  pageSize: 500,
  keepMessages: 200,
  persistDelayMs: 250,
  syncConcurrency: 4,
  ordered: true,
  chats: 'all',
  reconnectOnSupersede: false,
});

/** The sub claim of a compact JWT, unverified (the server verifies; the client only needs its own id). */
export function tokenSubject(token) {
  const part = String(token).split('.')[1];
  if (!part) throw new WaterlineError('invalid', 'not a compact JWT');
  const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
  const bytes = Uint8Array.from(json, (c) => c.charCodeAt(0));
  const sub = JSON.parse(new TextDecoder().decode(bytes)).sub;
  if (typeof sub !== 'string' || sub === '') throw new WaterlineError('invalid', 'the token has no sub');
  return sub;
}

function newCorrelationId() {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  return `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

function wsUrl(base, token) {
  const u = new URL('/ws', base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.searchParams.set('access_token', token);
  return u.toString();
}

/** The fields of a pending operation beyond correlationId, chatId and body, as stored and as pending() shows them. */
const OP_FIELDS = ['messageId', 'emoji', 'on', 'replyTo', 'attachments', 'attachmentDetails'];

function copyOf(value) {
  return value == null || typeof value !== 'object' ? value : JSON.parse(JSON.stringify(value));
}

/** The frame of a pending operation: send, edit, delete or react (PROTOCOL.md §3, §9). */
function frameOf(s) {
  const op = s.op ?? 'send';
  const base = { type: op, correlationId: s.correlationId, chatId: s.chatId };
  switch (op) {
    case 'edit': return { ...base, messageId: s.messageId, body: s.body };
    case 'delete': return { ...base, messageId: s.messageId };
    case 'react': return { ...base, messageId: s.messageId, emoji: s.emoji, on: s.on !== false };
    default: {
      const f = { ...base, body: s.body };
      if (s.replyTo) f.replyTo = s.replyTo;
      if (s.attachments?.length) f.attachments = s.attachments;
      return f;
    }
  }
}

/** The entry an accepted operation made, as the other members get it; null when it made none. */
function entryOf(s, f, senderId) {
  const base = { messageId: f.messageId, correlationId: f.correlationId, chatId: f.chatId, seq: f.seq, senderId, sentAt: f.sentAt };
  switch (s.op ?? 'send') {
    case 'edit': return { ...base, kind: 'edit', targetId: s.messageId, body: s.body };
    case 'delete': return { ...base, kind: 'delete', targetId: s.messageId, body: '' };
    // a reaction that changed nothing is answered with its target's messageId and seq: no entry
    case 'react': return f.unchanged ? null : { ...base, kind: 'reaction', targetId: s.messageId, emoji: s.emoji, on: s.on !== false, body: '' };
    default: {
      const m = { ...base, kind: 'text', body: s.body };
      if (s.replyTo) m.replyTo = s.replyTo;
      if (s.attachments?.length) {
        m.attachments = [...s.attachments];
        if (s.attachmentDetails?.length) m.attachmentDetails = copyOf(s.attachmentDetails);
      }
      return m;
    }
  }
}

/** A message (or entry) as the chat list shows it (§10): its body cut to 200 UTF-16 code units, never half a pair. */
function lastMessageOf(m) {
  let body = m.deleted ? '' : (m.body ?? '');
  if (body.length > 200) body = body.slice(0, /[\uD800-\uDBFF]/.test(body[199]) ? 199 : 200);
  const out = { messageId: m.messageId, seq: m.seq, senderId: m.senderId, kind: m.kind ?? 'text', body, sentAt: m.sentAt,
    deleted: m.deleted === true };
  if (m.editedAt && !m.deleted) out.editedAt = m.editedAt;
  return out;
}

/** A presence as presenceOf() gives it (PROTOCOL.md §10): lastSeen a string or null; hidden only in one's own. */
function presenceView(p) {
  const view = { userId: p.userId, state: p.state, lastSeen: typeof p.lastSeen === 'string' ? p.lastSeen : null };
  if (typeof p.hidden === 'boolean') view.hidden = p.hidden;
  return view;
}

function messageOf(frame) {
  const { type, deliveryId, ...m } = frame;
  if (m.kind == null) m.kind = 'text';
  return m;
}

export class WaterlineClient {
  #o;
  #events = new Emitter();
  #store;
  #WebSocket;
  #fetch;
  #urls;
  #urlIndex = 0;
  #tokenSource;
  #token = null;
  #userId = null;
  #state = 'idle';
  #conn = null;
  #attempt = 0;
  #reconnectTimer = null;
  #started = null;
  #loaded = false;
  #sendWrites = new Set();
  #closed = false;
  #limits = {};
  #chats = new Map();
  #pending = new Map();
  #ordinal = 0;
  #inflight = 0;
  #subs = new Map();
  /** what upload() answered, by attachmentId: an own send names its attachments with these */
  #uploads = new Map();
  #typingSent = new Map();
  #typists = new Map();
  #spoke = new Map();
  /** userId -> { view, heard }: what was last learned of each user's presence; heard counts the frames */
  #presence = new Map();
  #presenceHeard = 0;
  #stats = { connects: 0, welcomes: 0, pings: 0, delivered: 0, duplicates: 0, acked: 0, ackFrames: 0, sent: 0, resent: 0, retried: 0, historyPages: 0 };
  #onOnline = () => this.#reconnectNow();
  #onPageHide = () => { for (const chat of this.#chats.values()) if (chat.dirty) this.#persistChat(chat, true); };

  /**
   * @param {object} options see index.d.ts (ClientOptions)
   */
  constructor(options = {}) {
    this.#o = { ...DEFAULTS, ...options };
    const urls = options.urls ?? options.url ?? globalThis.location?.origin;
    this.#urls = (Array.isArray(urls) ? urls : [urls]).filter(Boolean).map(String);
    if (this.#urls.length === 0) throw new TypeError('urls: at least one server base URL is needed');
    if (options.token == null) throw new TypeError('token: a JWT or a function that returns one is needed');
    this.#tokenSource = options.token;
    this.#store = options.store ?? memoryStore();
    this.#WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.#fetch = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (!this.#fetch) throw new TypeError('fetch is not available: pass options.fetch');
  }

  get state() { return this.#state; }
  get userId() { return this.#userId; }
  get limits() { return { ...this.#limits }; }
  /** The base URL in use (the one connected to, or the next to try). */
  get url() { return this.#urls[this.#urlIndex % this.#urls.length]; }

  on(type, listener) { return this.#events.on(type, listener); }
  off(type, listener) { this.#events.off(type, listener); }

  stats() { return { ...this.#stats, acksQueued: this.#conn?.acks.length ?? 0, pending: this.#pending.size, inflight: this.#inflight }; }

  /** Loads the store and connects; resolves once the stored state is loaded (not when connected). */
  start() {
    if (this.#closed) return Promise.reject(new WaterlineError('closed', 'the client is closed'));
    if (!this.#started) {
      const started = (async () => {
        this.#token = await this.#freshToken('start');
        this.#userId = tokenSubject(this.#token);
        // chats met before start() (getChat) count the reader's own reactions from here on
        for (const chat of this.#chats.values()) chat.log.me = this.#userId;
        await this.#load();
        this.#loaded = true;
        for (const s of this.#pending.values()) if (s.state === 'saving') this.#saveSend(s);
        if (this.#closed) return;
        globalThis.addEventListener?.('online', this.#onOnline);
        globalThis.addEventListener?.('pagehide', this.#onPageHide);
        this.#connect();
      })();
      this.#started = started;
      // a start that failed (the token provider, the store) may be tried again; it is also said as an event
      started.catch((error) => {
        if (this.#started === started) this.#started = null;
        this.#events.emit('error', { source: 'start', error });
      });
    }
    return this.#started;
  }

  /** Closes the connection for good and writes what is still to be stored. */
  async close() {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    globalThis.removeEventListener?.('online', this.#onOnline);
    globalThis.removeEventListener?.('pagehide', this.#onPageHide);
    const conn = this.#conn;
    if (conn) {
      this.#dropConnection(conn, 1000, 'closed by the client');
      try { conn.ws.close(1000, 'bye'); } catch { /* already closed */ }
    }
    for (const s of this.#pending.values()) clearTimeout(s.timer);
    for (const sub of [...this.#subs.values()]) sub.close();
    for (const of of this.#typists.values()) for (const timer of of.values()) clearTimeout(timer);
    this.#typists.clear();
    for (const chat of this.#chats.values()) {
      clearTimeout(chat.gapTimer);
      chat.gapTimer = null;
    }
    await Promise.all([...this.#chats.values()].map((c) => (c.dirty ? this.#persistChat(c, true) : c.writing)));
    // a send made just before close() is in the store when close() resolves
    await Promise.all([...this.#sendWrites]);
    this.#setState('closed');
  }

  // ---------------------------------------------------------------- connection

  async #freshToken(reason) {
    const t = typeof this.#tokenSource === 'function' ? await this.#tokenSource({ reason, userId: this.#userId }) : this.#tokenSource;
    if (typeof t !== 'string' || t === '') throw new WaterlineError('invalid', 'the token provider returned no token');
    return t;
  }

  #setState(state, detail = {}) {
    const previous = this.#state;
    this.#state = state;
    if (previous !== state || detail.code != null) this.#events.emit('state', { state, previous, ...detail });
  }

  async #connect() {
    if (this.#closed || this.#conn) return;
    this.#reconnectTimer = null;
    const base = this.url;
    this.#setState(this.#stats.welcomes === 0 && this.#stats.connects === 0 ? 'connecting' : 'reconnecting', { url: base, attempt: this.#attempt });
    this.#stats.connects++;
    const conn = { ws: null, base, stop: new AbortController(), wired: new Set(), welcomed: false, welcomedAt: 0, lastSent: Date.now(), lastReceived: Date.now(), acks: [], ackTimer: null, timers: [], dead: false };
    this.#conn = conn;
    // armed before the token is asked for: a provider that never answers must not stop reconnecting
    conn.timers.push(setTimeout(() => {
      if (!conn.welcomed) this.#abandon(conn, 'no welcome within ' + this.#o.connectTimeoutMs + ' ms');
    }, this.#o.connectTimeoutMs));
    try {
      const token = await this.#freshToken(this.#stats.connects === 1 ? 'start' : 'reconnect');
      if (conn.dead) return;
      this.#token = token;
      if (!this.#WebSocket) throw new WaterlineError('unavailable', 'no WebSocket here: pass options.WebSocket (Node 20: --experimental-websocket, or the ws package)');
      conn.ws = new this.#WebSocket(wsUrl(base, this.#token));
    } catch (error) {
      // a server that is down fails the token provider too (a dev token comes from it): the state event says why
      this.#dropConnection(conn, 1006, String(error?.cause?.message ?? error?.message ?? error));
      return;
    }
    const ws = conn.ws;
    ws.addEventListener('message', (ev) => { if (this.#conn === conn) this.#onFrame(conn, ev.data); });
    ws.addEventListener('close', (ev) => this.#dropConnection(conn, ev.code, ev.reason));
    // a socket that fails to open may report only its error (Node 20's WebSocket does): handled as closed
    ws.addEventListener('error', () => { if (!conn.welcomed) this.#abandon(conn, 'the connection failed'); });
    ws.addEventListener('close', (ev) => {
      // A frame over the server's limit closes with 1009 instead of an answer. Which send it was is
      // not said, so a send fails only if it was unanswered at two such closes in a row (the others
      // go again; checked against maxFrameBytes before sending, this happens only where the limit
      // is lower than the welcome said, a proxy's say).
      if (ev.code !== 1009) return;
      for (const s of conn.wired) {
        s.oversize = (s.oversize ?? 0) + 1;
        if (s.oversize >= 2) this.#failLocally(s, 'too_large', 'the connection closed with 1009 (frame too large) twice with this send unanswered');
      }
    });
  }

  /** Gives up on a connection that does not answer: handled as closed at once, whatever its socket does later. */
  #abandon(conn, reason) {
    this.#dropConnection(conn, 1006, reason);
    try { conn.ws?.close(1000, 'given up'); } catch { /* ignore: it is already dropped */ }
  }

  #reconnectNow() {
    if (this.#closed || this.#conn || this.#state === 'superseded') return;
    clearTimeout(this.#reconnectTimer);
    this.#connect();
  }

  /** Reconnects after 4009 (superseded): the application's decision, since it takes the session back from the other tab. */
  reconnect() {
    if (this.#closed) throw new WaterlineError('closed', 'the client is closed');
    this.#attempt = 0;
    // not #reconnectNow: that one stays down while superseded (an 'online' event must not take the session back)
    if (this.#conn) return;
    clearTimeout(this.#reconnectTimer);
    this.#connect();
  }

  #dropConnection(conn, code, reason) {
    if (conn.dead) return;
    conn.dead = true;
    conn.stop.abort();
    for (const t of conn.timers) { clearTimeout(t); clearInterval(t); }
    clearTimeout(conn.ackTimer);
    if (this.#conn !== conn) return;
    this.#conn = null;
    // every send on the wire is unanswered now: it goes again, with its correlationId, on the next connection
    for (const s of this.#pending.values()) {
      if (s.state === 'inflight') { s.state = 'queued'; this.#inflight--; }
    }
    for (const sub of this.#subs.values()) if (sub.transport === 'ws') sub.subscribed = false;
    if (this.#closed) return;
    if (code === 4009 && !this.#o.reconnectOnSupersede) {
      this.#setState('superseded', { code, reason });
      return;
    }
    if (conn.welcomed && Date.now() - conn.welcomedAt > 5_000) this.#attempt = 0;
    const wait = code === 4001 && this.#attempt === 0 ? 0 : fullJitter(this.#attempt, this.#o.backoffInitialMs, this.#o.backoffMaxMs);
    this.#attempt++;
    this.#urlIndex++;
    this.#setState('reconnecting', { code, reason, delayMs: wait, url: this.url, attempt: this.#attempt });
    this.#reconnectTimer = setTimeout(() => this.#connect(), wait);
  }

  #frame(conn, obj) {
    return this.#frameText(conn, JSON.stringify(obj));
  }

  #frameText(conn, text) {
    if (!conn || conn.dead || !conn.ws || conn.ws.readyState !== OPEN) return false;
    try {
      conn.ws.send(text);
    } catch (error) {
      this.#events.emit('error', { source: 'socket', error });
      this.#abandon(conn, 'write failed');
      return false;
    }
    conn.lastSent = Date.now();
    return true;
  }

  #onFrame(conn, data) {
    conn.lastReceived = Date.now();
    let f;
    try {
      f = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
    } catch (error) {
      this.#events.emit('error', { source: 'frame', error });
      return;
    }
    switch (f.type) {
      case 'welcome': return this.#onWelcome(conn, f);
      case 'message': return this.#onMessage(conn, f);
      case 'accepted': return this.#onAccepted(f);
      case 'error': return this.#onError(f);
      case 'read': return this.#onRead(f);
      case 'typing': return this.#onTyping(f);
      case 'presence': return this.#onPresence(f);
      case 'chunk': return this.#onChunk(this.#subs.get(f.streamId), f);
      case 'stream': return this.#onStreamState(this.#subs.get(f.streamId), f);
      case 'pong': case 'appended': return undefined;
      default: return this.#events.emit('frame', f);
    }
  }

  #onWelcome(conn, f) {
    conn.welcomed = true;
    conn.welcomedAt = Date.now();
    this.#stats.welcomes++;
    this.#limits = f.limits ?? {};
    this.#userId = f.userId ?? this.#userId;
    const idleMs = (this.#limits.idleTimeoutSeconds ?? 30) * 1000;
    // Something goes out at least every idle / 3 (the contract asks idle / 2; a third leaves a
    // margin for a slow tick); nothing coming back for a whole idle timeout means the path is dead.
    const every = Math.max(500, Math.floor(idleMs / 3));
    // ticks at half the ping interval: a tick that lands a moment early is followed by one in time
    conn.timers.push(setInterval(() => this.#tick(conn, every, idleMs), Math.max(100, Math.min(every / 2, 1000))));
    this.#setState('open', { url: conn.base, sessionId: f.sessionId });
    for (const sub of this.#subs.values()) if (sub.transport === 'ws') this.#subscribeWs(sub);
    for (const chat of this.#chats.values()) {
      if (chat.readWanted > 0) this.#frame(conn, { type: 'read', chatId: chat.chatId, seq: chat.readWanted });
    }
    this.#pump();
    this.#resyncAll(conn).catch((error) => this.#events.emit('error', { source: 'resync', error }));
  }

  #tick(conn, every, idleMs) {
    const now = Date.now();
    if (now - conn.lastReceived > idleMs) return this.#abandon(conn, 'nothing received for ' + idleMs + ' ms');
    if (now - conn.lastSent >= every && this.#frame(conn, { type: 'ping' })) this.#stats.pings++;
    for (const s of this.#pending.values()) {
      if (s.state === 'inflight' && now - s.wiredAt > this.#o.sendTimeoutMs) {
        // an answer that did not come: the same correlationId again is safe (idempotent retry)
        s.wiredAt = now;
        this.#stats.resent++;
        this.#frame(conn, frameOf(s));
      }
    }
    return undefined;
  }

  #ack(conn, deliveryId) {
    conn.acks.push(deliveryId);
    if (conn.acks.length >= this.#o.ackBatch) this.#flushAcks(conn);
    else if (!conn.ackTimer) conn.ackTimer = setTimeout(() => this.#flushAcks(conn), this.#o.ackDelayMs);
  }

  #flushAcks(conn) {
    clearTimeout(conn.ackTimer);
    conn.ackTimer = null;
    if (conn.acks.length === 0) return;
    const ids = conn.acks;
    conn.acks = [];
    if (this.#frame(conn, { type: 'ack', ids })) {
      this.#stats.acked += ids.length;
      this.#stats.ackFrames++;
    }
  }

  // ---------------------------------------------------------------- chats and the delivery loop

  #chatKey(chatId) { return `${this.#userId}/chat/${chatId}`; }
  #sendKey(correlationId) { return `${this.#userId}/send/${correlationId}`; }

  async #load() {
    for (const key of await this.#store.keys(`${this.#userId}/chat/`)) {
      const saved = await this.#store.get(key);
      if (saved?.chatId) {
        const chat = this.#chat(saved.chatId);
        Object.assign(chat, { title: saved.title ?? null, members: saved.members ?? [], seq: saved.seq ?? 0,
          messageId: saved.messageId ?? null, log: this.#newLog(saved.messages), readSeq: saved.readSeq ?? {}, readWanted: 0 });
      }
    }
    const sends = [];
    for (const key of await this.#store.keys(`${this.#userId}/send/`)) {
      const s = await this.#store.get(key);
      if (s?.correlationId) sends.push(s);
    }
    sends.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.ordinal - b.ordinal);
    // restored sends were written before any made since start(): they go first
    const fresh = [...this.#pending.entries()];
    this.#pending.clear();
    for (const s of sends) {
      if (fresh.some(([id]) => id === s.correlationId)) continue;
      this.#pending.set(s.correlationId, { op: 'send', ...s, state: 'queued', attempts: 0, retries: 0, timer: null, wiredAt: 0, promise: null, settle: null });
      this.#ordinal = Math.max(this.#ordinal, (s.ordinal ?? 0) + 1);
    }
    for (const [id, s] of fresh) this.#pending.set(id, s);
  }

  #chat(chatId) {
    let chat = this.#chats.get(chatId);
    if (!chat) {
      chat = { chatId, title: null, members: [], lastSeq: 0, seq: 0, messageId: null, log: this.#newLog(), held: new Map(),
        readSeq: {}, readWanted: 0, syncing: null, again: false, gapTimer: null, persistTimer: null, dirty: false,
        writing: Promise.resolve(), unread: 0, unreadAt: 0, ownSeq: 0, lastMessage: null };
      this.#chats.set(chatId, chat);
      this.#events.emit('chat', this.#chatView(chat));
    }
    return chat;
  }

  #newLog(records = []) {
    return new ChatLog({ me: this.#userId, keep: this.#o.keepMessages, records });
  }

  #chatView(chat) {
    return { chatId: chat.chatId, title: chat.title, members: [...chat.members], seq: chat.seq, readSeq: { ...chat.readSeq },
      unread: chat.unread, lastMessage: chat.lastMessage ? { ...chat.lastMessage } : null };
  }

  /** This user's read position in the chat: the later of their receipt and their own last message (sending is reading, §10). */
  #readPosition(chat) {
    return Math.max(chat.readSeq[this.#userId] ?? 0, chat.readWanted, chat.ownSeq);
  }

  /**
   * Keeps the chat list's fields live (§10) with an entry handed over in seq order: the server's
   * count holds every entry up to unreadAt, so only later ones change it. Returns whether they changed.
   */
  #countEntry(chat, m, updated) {
    if (m.seq <= chat.unreadAt) return false;
    chat.unreadAt = m.seq;
    const before = JSON.stringify([chat.unread, chat.lastMessage]);
    if (m.kind === 'text' || m.kind === 'stream') {
      if (m.senderId === this.#userId) {
        // everything before one's own message is read, and nothing after it has arrived yet
        chat.ownSeq = m.seq;
        chat.unread = 0;
      } else if (m.seq > this.#readPosition(chat)) {
        chat.unread++;
      }
      chat.lastMessage = lastMessageOf(m);
    } else if (m.kind === 'edit' || m.kind === 'delete') {
      const target = updated.find((u) => u.messageId === m.targetId);
      if (target && chat.lastMessage?.messageId === target.messageId) chat.lastMessage = lastMessageOf(target);
      if (m.kind === 'delete' && target && target.senderId !== this.#userId && target.seq > this.#readPosition(chat)) {
        chat.unread = Math.max(0, chat.unread - 1);
      }
    }
    return JSON.stringify([chat.unread, chat.lastMessage]) !== before;
  }

  /** The chats this client knows (listed at connect, created, or met in a frame). */
  chats() { return [...this.#chats.values()].map((c) => this.#chatView(c)); }

  /**
   * The chat's recent messages handed to the application (at most keepMessages), in seq order,
   * each in its current state (edits, delete, reactions applied); entries of a kind this client
   * does not know are among them, in their place. Edits, deletes and reactions are not: they are
   * applied to the message they change.
   */
  messages(chatId) { return this.#chats.get(chatId)?.log.messages() ?? []; }

  /** One message of the chat as held (see messages()), or undefined if it is not (or no longer) held. */
  message(chatId, messageId) { return this.#chats.get(chatId)?.log.get(messageId); }

  /** The highest seq of the chat handed to the application with none missing below it. */
  cursor(chatId) { return this.#chats.get(chatId)?.seq ?? 0; }

  /** Sends not yet accepted (restored from the store after a reload, too), oldest first. */
  pending(chatId) {
    return [...this.#pending.values()].filter((s) => chatId == null || s.chatId === chatId)
      .map((s) => {
        const out = { correlationId: s.correlationId, chatId: s.chatId, op: s.op ?? 'send', body: s.body, createdAt: s.createdAt, state: s.state, attempts: s.attempts };
        for (const k of OP_FIELDS) if (s[k] !== undefined) out[k] = copyOf(s[k]);
        return out;
      });
  }

  #onMessage(conn, f) {
    if (typeof f.deliveryId === 'number') this.#ack(conn, f.deliveryId);
    if (typeof f.chatId !== 'string' || typeof f.seq !== 'number') return;
    this.#take(this.#chat(f.chatId), messageOf(f));
  }

  #take(chat, m) {
    if (this.#closed) return;
    if (m.seq <= chat.seq || chat.held.has(m.seq)) {
      this.#stats.duplicates++;
      return;
    }
    chat.held.set(m.seq, m);
    this.#drain(chat);
  }

  #drain(chat) {
    let handed = false;
    for (let next = chat.held.get(chat.seq + 1); next; next = chat.held.get(chat.seq + 1)) {
      chat.held.delete(next.seq);
      chat.seq = next.seq;
      chat.messageId = next.messageId;
      if (chat.seq > chat.lastSeq) chat.lastSeq = chat.seq;
      handed = true;
      const { entry, updated } = chat.log.apply(next);
      if (!entry) {
        this.#stats.duplicates++;
        continue;
      }
      this.#stats.delivered++;
      if (entry.senderId !== this.#userId && (entry.kind === 'text' || entry.kind === 'stream')) {
        const now = Date.now();
        if (this.#spoke.size > 1000) for (const [k, at] of this.#spoke) if (now - at >= TYPING_LATE_MS) this.#spoke.delete(k);
        this.#spoke.set(`${chat.chatId}\u0000${entry.senderId}`, now);
        this.#stoppedTyping(chat.chatId, entry.senderId);
      }
      const counted = this.#countEntry(chat, next, updated);
      this.#events.emit('message', entry);
      if (counted) this.#events.emit('chat', this.#chatView(chat));
      for (const message of updated) {
        this.#events.emit('update', { chatId: chat.chatId, messageId: message.messageId, change: entry.kind, message, entry });
      }
    }
    if (handed) this.#persistChat(chat);
    if (chat.held.size === 0) {
      clearTimeout(chat.gapTimer);
      chat.gapTimer = null;
    } else if (!chat.gapTimer && !chat.syncing && !this.#closed && this.#conn?.welcomed) {
      // while disconnected nothing is armed: the next welcome reads every chat that holds a gap
      chat.gapTimer = setTimeout(() => {
        chat.gapTimer = null;
        if (chat.held.size > 0) this.#sync(chat);
      }, this.#o.gapWaitMs);
    }
  }

  /**
   * Writes the chat's cursor with its recent messages, at most once per persistDelayMs (a crash
   * in between costs a re-read from history, never a message). A superseded client writes
   * nothing: another tab or device on the same store is ahead of it.
   */
  #persistChat(chat, now = false) {
    chat.dirty = true;
    const write = () => {
      chat.persistTimer = null;
      // one write at a time per chat, in order: a slow store cannot land an older cursor after a newer one
      chat.writing = chat.writing.then(async () => {
        if (this.#state === 'superseded' || !chat.dirty) return;
        chat.dirty = false;
        // a copy taken now: the live arrays go on changing while a store works
        const saved = { chatId: chat.chatId, title: chat.title, members: [...chat.members], seq: chat.seq, messageId: chat.messageId,
          messages: chat.log.toJSON(), readSeq: { ...chat.readSeq } };
        try {
          await this.#store.set(this.#chatKey(chat.chatId), saved);
        } catch (error) {
          chat.dirty = true;
          this.#events.emit('error', { source: 'store', error });
        }
      });
      return chat.writing;
    };
    if (now) {
      clearTimeout(chat.persistTimer);
      return write();
    }
    if (!chat.persistTimer && !this.#closed) chat.persistTimer = setTimeout(write, this.#o.persistDelayMs);
    return undefined;
  }

  /**
   * §4 on every (re)connect: the chat list says which chats have something past their cursor,
   * and those are read from history. If the list cannot be had, every chat already known is
   * read anyway (a read from an up-to-date cursor is one empty page), and the list is asked
   * again with backoff for chats this client does not know yet; caughtUp comes once both ended.
   */
  async #resyncAll(conn) {
    const live = () => !conn.dead && !this.#closed;
    const listAll = async () => {
      if (this.#o.chats !== 'all') {
        for (const id of this.#o.chats) this.#chat(id).lastSeq = Number.MAX_SAFE_INTEGER;
        return true;
      }
      try {
        let after = null;
        do {
          const page = await this.rest('GET', `/api/chats?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`);
          for (const c of page.chats) this.#learn(c);
          after = page.next;
        } while (after && live());
        return true;
      } catch (error) {
        this.#events.emit('error', { source: 'resync', error });
        return false;
      }
    };
    const syncWhere = async (pick) => {
      const todo = [...this.#chats.values()].filter(pick);
      const workers = Array.from({ length: Math.min(this.#o.syncConcurrency, todo.length) }, async () => {
        for (let chat = todo.shift(); chat && live(); chat = todo.shift()) await this.#sync(chat);
      });
      await Promise.all(workers);
    };
    const behind = (c) => c.lastSeq > c.seq || c.held.size > 0;
    let listed = await listAll();
    await syncWhere(listed ? behind : () => true);
    for (let attempt = 0; !listed && live(); attempt++) {
      await delay(fullJitter(attempt + 1, this.#o.backoffInitialMs, this.#o.backoffMaxMs), conn.stop.signal);
      if (!live()) return;
      listed = await listAll();
      if (listed) await syncWhere(behind);
    }
    if (live()) this.#events.emit('caughtUp', { chats: this.#chats.size });
  }

  #learn(c) {
    const chat = this.#chat(c.chatId);
    const before = JSON.stringify([chat.title, chat.members]);
    const listBefore = JSON.stringify([chat.unread, chat.lastMessage]);
    chat.title = c.title ?? null;
    chat.members = c.members ?? chat.members;
    // the server's count, unless this client has already counted past what it had when it answered
    if (typeof c.unread === 'number' && typeof c.lastSeq === 'number' && c.lastSeq >= chat.unreadAt) {
      chat.unread = c.unread;
      chat.unreadAt = c.lastSeq;
      chat.lastMessage = c.lastMessage ? { ...c.lastMessage } : null;
    }
    const changed = JSON.stringify([chat.title, chat.members]) !== before;
    if (changed) this.#persistChat(chat);
    if (changed || JSON.stringify([chat.unread, chat.lastMessage]) !== listBefore) this.#events.emit('chat', this.#chatView(chat));
    if (typeof c.lastSeq === 'number' && c.lastSeq > chat.lastSeq) chat.lastSeq = c.lastSeq;
    if (c.readSeq) for (const [u, s] of Object.entries(c.readSeq)) if (!(chat.readSeq[u] >= s)) chat.readSeq[u] = s;
    return chat;
  }

  /**
   * Reads the chat's history from its cursor until hasMore is false. One read per chat at a
   * time; asked again meanwhile, it goes round once more when the current read ends.
   */
  #sync(chat) {
    if (chat.syncing) {
      chat.again = true;
      return chat.syncing;
    }
    clearTimeout(chat.gapTimer);
    chat.gapTimer = null;
    chat.syncing = (async () => {
      try {
        if (this.#closed) return;
        do {
          chat.again = false;
          let since = chat.messageId;
          let first = true;
          for (;;) {
            const q = `limit=${this.#o.pageSize}${since ? `&since=${encodeURIComponent(since)}` : ''}`;
            const page = await this.rest('GET', `/api/chats/${encodeURIComponent(chat.chatId)}/messages?${q}`);
            this.#stats.historyPages++;
            const msgs = page.messages ?? [];
            if (first && msgs.length > 0 && msgs[0].seq > chat.seq + 1) {
              // history older than this is gone (retention): the server starts at what it keeps. Said, not skipped silently.
              const from = chat.seq + 1;
              chat.seq = msgs[0].seq - 1;
              for (const s of chat.held.keys()) if (s <= chat.seq) chat.held.delete(s);
              this.#events.emit('gap', { chatId: chat.chatId, fromSeq: from, toSeq: chat.seq });
            }
            first = false;
            for (const m of msgs) this.#take(chat, messageOf(m));
            if (!page.hasMore || msgs.length === 0 || this.#closed) break;
            since = msgs[msgs.length - 1].messageId;
          }
        } while (chat.again);
        this.#events.emit('synced', { chatId: chat.chatId, seq: chat.seq });
      } catch (error) {
        if (error?.status === 404) this.#events.emit('error', { source: 'sync', chatId: chat.chatId, error });
        else {
          this.#events.emit('error', { source: 'sync', chatId: chat.chatId, error });
          // a read that failed is tried again while connected (the next connect reads anyway)
          if (this.#conn?.welcomed && !this.#closed) chat.gapTimer = setTimeout(() => { chat.gapTimer = null; this.#sync(chat); }, this.#o.backoffMaxMs / 4);
        }
      } finally {
        chat.syncing = null;
        if (chat.held.size > 0 && !chat.gapTimer) this.#drain(chat);
      }
    })();
    return chat.syncing;
  }

  /** Reads a chat (and starts following it if it was not known): REST GET /api/chats/{chatId}. */
  async getChat(chatId) {
    const c = await this.rest('GET', `/api/chats/${encodeURIComponent(chatId)}`);
    const chat = this.#learn(c);
    if (chat.lastSeq > chat.seq) this.#sync(chat);
    return { ...c };
  }

  async createChat(members, title) {
    const c = await this.rest('POST', '/api/chats', title == null ? { members } : { members, title });
    this.#learn(c);
    return c;
  }

  async addMember(chatId, userId) {
    const c = await this.rest('POST', `/api/chats/${encodeURIComponent(chatId)}/members`, { userId });
    this.#learn(c);
    return c;
  }

  /** Every chat of the caller, all pages. */
  async listChats() {
    const out = [];
    let after = null;
    do {
      const page = await this.rest('GET', `/api/chats?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      for (const c of page.chats) { this.#learn(c); out.push(c); }
      after = page.next;
    } while (after);
    return out;
  }

  /**
   * Searches the caller's chats (GET /api/search, PROTOCOL.md §10): q in web-search syntax (words,
   * "a phrase", or, -word); chatId: only that chat; limit 1-100 (server default 20); before: the
   * previous page's next. Resolves to { results: [{ chatId, messageId, seq, senderId, sentAt,
   * snippet, highlights }], next }, newest first; next is null on the last page. A refusal rejects
   * with a WaterlineError (invalid, not_found, unavailable, rate_limited).
   */
  search(q, { chatId, limit, before } = {}) {
    const params = new URLSearchParams({ q });
    if (chatId != null) params.set('chatId', chatId);
    if (limit != null) params.set('limit', String(limit));
    if (before != null) params.set('before', before);
    return this.rest('GET', `/api/search?${params}`);
  }

  // ---------------------------------------------------------------- receipts

  /** Marks the chat read up to seq; sent now if connected, else on the next connection. */
  markRead(chatId, seq) {
    const chat = this.#chat(chatId);
    if (!(seq > chat.readWanted)) return;
    chat.readWanted = seq;
    if (this.#userId && !(chat.readSeq[this.#userId] >= seq)) chat.readSeq[this.#userId] = seq;
    this.#recount(chat);
    this.#frame(this.#conn?.welcomed ? this.#conn : null, { type: 'read', chatId, seq });
  }

  /**
   * The unread count after the read position moved: what is past it among the messages held (at
   * most the count before, which may hold messages this client no longer keeps).
   */
  #recount(chat) {
    const at = this.#readPosition(chat);
    const unread = at >= chat.unreadAt ? 0 : Math.min(chat.unread, chat.log.messages().filter((m) =>
      (m.kind === 'text' || m.kind === 'stream') && m.senderId !== this.#userId && !m.deleted && m.seq > at && m.seq <= chat.unreadAt).length);
    if (unread !== chat.unread) {
      chat.unread = unread;
      this.#events.emit('chat', this.#chatView(chat));
    }
  }

  /** The members' read positions known for the chat (from getChat and live receipts). */
  readSeq(chatId) { return { ...(this.#chats.get(chatId)?.readSeq ?? {}) }; }

  #onRead(f) {
    const chat = this.#chat(f.chatId);
    if (!(chat.readSeq[f.userId] >= f.seq)) {
      chat.readSeq[f.userId] = f.seq;
      this.#persistChat(chat);
    }
    this.#events.emit('read', { chatId: f.chatId, userId: f.userId, seq: f.seq });
  }

  // ---------------------------------------------------------------- typing (PROTOCOL.md §10)

  /**
   * Says the user is typing in the chat: call it on every keystroke; a frame goes out at most
   * once per TYPING_EVERY_MS per chat, and only while connected (a typing indicator is never
   * queued: it would be stale by the time it arrived).
   */
  typing(chatId) {
    const now = Date.now();
    const last = this.#typingSent.get(chatId) ?? -Infinity;
    if (now - last < TYPING_EVERY_MS) return false;
    const conn = this.#conn?.welcomed ? this.#conn : null;
    if (!this.#frame(conn, { type: 'typing', chatId })) return false;
    this.#typingSent.set(chatId, now);
    return true;
  }

  /** Who is typing in the chat now (each shown for TYPING_SHOWN_MS after their last frame). */
  typists(chatId) { return [...(this.#typists.get(chatId)?.keys() ?? [])]; }

  #onTyping(f) {
    if (f.userId === this.#userId) return;
    // a typing frame overtaken by the message it announced (pushed by another loop) says nothing new
    if (Date.now() - (this.#spoke.get(`${f.chatId}\u0000${f.userId}`) ?? -Infinity) < TYPING_LATE_MS) return;
    let of = this.#typists.get(f.chatId);
    if (!of) this.#typists.set(f.chatId, (of = new Map()));
    const shown = of.has(f.userId);
    clearTimeout(of.get(f.userId));
    of.set(f.userId, setTimeout(() => this.#stoppedTyping(f.chatId, f.userId), TYPING_SHOWN_MS));
    if (!shown) this.#events.emit('typing', { chatId: f.chatId, userId: f.userId, typing: true });
  }

  #stoppedTyping(chatId, userId) {
    const of = this.#typists.get(chatId);
    if (!of?.has(userId)) return;
    clearTimeout(of.get(userId));
    of.delete(userId);
    if (of.size === 0) this.#typists.delete(chatId);
    this.#events.emit('typing', { chatId, userId, typing: false });
  }

  // ---------------------------------------------------------------- presence (PROTOCOL.md §10)

  /**
   * What this client last learned of a user's presence, from a presence frame or getPresence():
   * { userId, state, lastSeen } (lastSeen an ISO-8601 string, or null when online, hidden or not
   * known; hidden too in one's own, from getPresence), or undefined when nothing was learned.
   * Frames are not replayed after a reconnect: what changed while disconnected is learned from
   * the next frame, or by asking again.
   */
  presenceOf(userId) {
    const known = this.#presence.get(userId);
    return known ? { ...known.view } : undefined;
  }

  /**
   * Asks the server for a user's presence (GET /api/users/{userId}/presence): of a user who shares
   * a chat with this one, or of this user (then with hidden); anyone else is refused with a
   * WaterlineError not_found. The answer becomes what presenceOf() gives, and a presence event
   * says so when it changed the state or lastSeen known, unless a presence frame of that user
   * arrived while it was on its way (the frame is as new or newer, and stands). Resolves to what
   * presenceOf(userId) gives then.
   */
  async getPresence(userId) {
    const heard = this.#presenceHeard;
    const answer = await this.rest('GET', `/api/users/${encodeURIComponent(userId)}/presence`);
    const view = presenceView({ ...answer, userId });
    const known = this.#presence.get(userId);
    if (!known || known.heard <= heard) {
      this.#presence.set(userId, { view, heard: known?.heard ?? 0 });
      if (known?.view.state !== view.state || known?.view.lastSeen !== view.lastSeen) {
        this.#events.emit('presence', { userId, state: view.state, lastSeen: view.lastSeen });
      }
    }
    return this.presenceOf(userId);
  }

  /** This user's settings (GET /api/me/settings): { presence: 'visible' | 'hidden' }. */
  getSettings() {
    return this.rest('GET', '/api/me/settings');
  }

  /**
   * Hides this user's presence (true) or shows it again (false): PUT /api/me/settings. Hidden, the
   * user is offline without lastSeen to everyone else, and the co-members connected now are told
   * so at once; shown again, they are told the user's state. Resolves to the settings,
   * { presence: 'hidden' | 'visible' }.
   */
  async setPresenceHidden(hidden) {
    if (typeof hidden !== 'boolean') throw new TypeError('setPresenceHidden: hidden is true or false');
    const settings = await this.rest('PUT', '/api/me/settings', { presence: hidden ? 'hidden' : 'visible' });
    const own = this.#presence.get(this.#userId);
    if (own && typeof own.view.hidden === 'boolean') own.view.hidden = settings?.presence === 'hidden';
    return settings;
  }

  #onPresence(f) {
    if (typeof f.userId !== 'string' || typeof f.state !== 'string') return;
    const view = presenceView(f);
    // one's own hidden is not in a frame: what getPresence last said of it is kept
    const own = this.#presence.get(f.userId)?.view.hidden;
    if (typeof own === 'boolean') view.hidden = own;
    this.#presence.set(f.userId, { view, heard: ++this.#presenceHeard });
    this.#events.emit('presence', { userId: view.userId, state: view.state, lastSeen: view.lastSeen });
  }

  // ---------------------------------------------------------------- sends

  /**
   * Posts a message. It is stored before it goes out, and kept until the server answers
   * accepted: re-sent with the same correlationId after a reconnect, retried with backoff on
   * overloaded / rate_limited / unavailable. Resolves with the accepted frame; rejects (and emits
   * failed) on invalid / too_large / not_found. With ordered (the default), a chat's sends go one
   * at a time, so they commit in the order they were made even when one has to be retried.
   * replyTo names a message of the same chat this one answers; attachments are attachmentIds
   * from upload() (at most 10; the body may be empty only with attachments).
   */
  send(chatId, body, { correlationId = newCorrelationId(), replyTo, attachments } = {}) {
    this.#typingSent.delete(chatId);   // typing after a send is a new message: said at once
    const op = { op: 'send', chatId, body };
    if (replyTo != null) op.replyTo = replyTo;
    if (attachments != null && attachments.length > 0) {
      op.attachments = [...attachments];
      const details = op.attachments.map((id) => this.#uploads.get(id)).filter(Boolean);
      if (details.length > 0) op.attachmentDetails = copyOf(details);
    }
    return this.#enqueue(op, correlationId);
  }

  /** Replaces the text of an own message (an edit entry; the original sender only, else forbidden). Kept and retried as send() is. */
  edit(chatId, messageId, body, { correlationId = newCorrelationId() } = {}) {
    return this.#enqueue({ op: 'edit', chatId, messageId, body }, correlationId);
  }

  /**
   * Deletes a message (its sender, or a chat admin): its text, its edits' text and its
   * attachments are erased. Deleting twice answers the first delete. Kept and retried as send() is.
   */
  delete(chatId, messageId, { correlationId = newCorrelationId() } = {}) {
    return this.#enqueue({ op: 'delete', chatId, messageId, body: '' }, correlationId);
  }

  /** The same as delete(). */
  deleteMessage(chatId, messageId, options) {
    return this.delete(chatId, messageId, options);
  }

  /**
   * Puts a reaction on a message (on = true) or takes it back (on = false). A change that changes
   * nothing resolves with unchanged: true and the target's messageId and seq (no entry is made).
   */
  react(chatId, messageId, emoji, on = true, { correlationId = newCorrelationId() } = {}) {
    return this.#enqueue({ op: 'react', chatId, messageId, emoji, on: on !== false, body: '' }, correlationId);
  }

  #enqueue(op, correlationId) {
    if (!this.#started) throw new WaterlineError('invalid', `call start() before ${op.op === 'send' ? 'send' : op.op}()`);
    if (this.#closed) throw new WaterlineError('closed', 'the client is closed');
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    promise.catch(() => { /* handled through the failed event when the caller does not await */ });
    promise.correlationId = correlationId;
    const existing = this.#pending.get(correlationId);
    if (existing) {
      if (!existing.promise) Object.assign(existing, { promise, settle });
      return existing.promise;
    }
    const s = { ...op, correlationId, createdAt: new Date().toISOString(), ordinal: this.#ordinal++,
      state: 'saving', attempts: 0, retries: 0, timer: null, wiredAt: 0, promise, settle };
    this.#pending.set(correlationId, s);
    // the store's keys carry the user, known once start() has loaded; until then start() saves it (#saveUnsaved)
    if (this.#loaded) this.#saveSend(s);
    return promise;
  }

  #saveSend(s) {
    this.#chat(s.chatId);
    const saved = { correlationId: s.correlationId, chatId: s.chatId, op: s.op ?? 'send', body: s.body, createdAt: s.createdAt, ordinal: s.ordinal };
    for (const k of OP_FIELDS) if (s[k] !== undefined) saved[k] = copyOf(s[k]);
    const write = this.#store.set(this.#sendKey(s.correlationId), saved)
      .catch((error) => this.#events.emit('error', { source: 'store', error }))
      .finally(() => {
        this.#sendWrites.delete(write);
        if (s.state === 'saving') s.state = 'queued';
        this.#pump();
      });
    this.#sendWrites.add(write);
  }

  #pump() {
    const conn = this.#conn;
    if (!conn?.welcomed || conn.dead) return;
    const max = this.#limits.maxInflightSends ?? 256;
    const busy = new Set();
    for (const s of this.#pending.values()) {
      if (this.#inflight >= max) break;
      if (s.state === 'queued' && !(this.#o.ordered && busy.has(s.chatId))) {
        s.state = 'inflight';
        s.attempts++;
        s.wiredAt = Date.now();
        this.#inflight++;
        if (s.attempts > 1) this.#stats.resent++; else this.#stats.sent++;
        const frame = JSON.stringify(frameOf(s));
        const maxBytes = this.#limits.maxFrameBytes;
        if (maxBytes && frame.length * 3 > maxBytes && new TextEncoder().encode(frame).length > maxBytes) {
          // the server would close the connection (1009) rather than answer: refused here, as too_large
          this.#failLocally(s, 'too_large', `the send frame is over the server's ${maxBytes} bytes`);
          continue;
        }
        conn.wired.add(s);
        if (!this.#frameText(conn, frame)) break;
      }
      if (s.state !== 'done') busy.add(s.chatId);
    }
  }

  #failLocally(s, code, message) {
    if (s.state === 'done') return;
    this.#finish(s);
    s.settle?.reject(new WaterlineError(code, message, { correlationId: s.correlationId, chatId: s.chatId }));
    this.#events.emit('failed', this.#failure(s, code, message));
  }

  #failure(s, code, message) {
    const out = { correlationId: s.correlationId, chatId: s.chatId, op: s.op ?? 'send', body: s.body, code, message };
    if (s.messageId !== undefined) out.messageId = s.messageId;
    if (s.emoji !== undefined) out.emoji = s.emoji;
    return out;
  }

  #finish(s) {
    this.#conn?.wired.delete(s);
    s.oversize = 0;
    if (s.state === 'inflight') this.#inflight--;
    s.state = 'done';
    clearTimeout(s.timer);
    this.#pending.delete(s.correlationId);
    this.#store.delete(this.#sendKey(s.correlationId)).catch((error) => this.#events.emit('error', { source: 'store', error }));
  }

  #onAccepted(f) {
    const s = this.#pending.get(f.correlationId);
    const chat = this.#chat(f.chatId);
    if (s) {
      this.#finish(s);
      const accepted = { correlationId: f.correlationId, messageId: f.messageId, chatId: f.chatId, seq: f.seq, sentAt: f.sentAt };
      if (f.unchanged === true) accepted.unchanged = true;
      s.settle?.resolve(accepted);
      const said = { ...accepted, op: s.op ?? 'send', body: s.body };
      if (s.messageId !== undefined) said.targetId = s.messageId;
      this.#events.emit('accepted', said);
      const entry = entryOf(s, f, this.#userId);
      if (entry) this.#take(chat, entry);
    } else if (f.seq > chat.seq) {
      // an answer to a send already settled (a re-send answered twice): its message comes from history
      if (f.seq > chat.lastSeq) chat.lastSeq = f.seq;
      this.#sync(chat);
    }
    this.#pump();
  }

  #onError(f) {
    if (f.streamId != null && f.correlationId == null) return this.#onStreamError(this.#subs.get(f.streamId), f);
    const s = f.correlationId != null ? this.#pending.get(f.correlationId) : undefined;
    if (!s) return this.#events.emit('error', { source: 'server', code: f.code, message: f.message, frame: f });
    const unknown = !RETRY.has(f.code) && !FINAL.has(f.code);
    if (unknown) s.unknownRetries = (s.unknownRetries ?? 0) + 1;
    if (RETRY.has(f.code) || (unknown && s.unknownRetries <= UNKNOWN_CODE_RETRIES)) {
      if (s.state === 'inflight') this.#inflight--;
      this.#conn?.wired.delete(s);
      s.state = 'retry';
      const wait = fullJitter(s.retries++, this.#o.sendRetryInitialMs, this.#o.sendRetryMaxMs);
      this.#stats.retried++;
      this.#events.emit('retry', { correlationId: s.correlationId, chatId: s.chatId, code: f.code, delayMs: wait });
      s.timer = setTimeout(() => {
        if (s.state === 'retry') s.state = 'queued';
        this.#pump();
      }, wait);
      return undefined;
    }
    this.#finish(s);
    const error = new WaterlineError(f.code, f.message, { correlationId: s.correlationId, chatId: s.chatId });
    s.settle?.reject(error);
    this.#events.emit('failed', this.#failure(s, f.code, f.message));
    this.#pump();
    return undefined;
  }

  // ---------------------------------------------------------------- streams

  /**
   * Follows a stream from fromSeq (default 1): every chunk once, in seq order, across
   * reconnects (resumed from the last seen + 1). transport 'ws' uses the WebSocket, 'sse' the
   * server-sent events endpoint; 'auto' (the default) uses the WebSocket when it is open, or
   * when no WebSocket is at hand SSE, which also needs no long-lived socket.
   */
  subscribe(streamId, { fromSeq = 1, transport = 'auto' } = {}) {
    const existing = this.#subs.get(streamId);
    if (existing) return existing.handle;
    const chosen = transport === 'auto' ? (this.#WebSocket && this.#conn?.welcomed ? 'ws' : 'sse') : transport;
    let finish;
    const done = new Promise((resolve, reject) => { finish = { resolve, reject }; });
    done.catch(() => { /* also emitted as an error event */ });
    const sub = { streamId, transport: chosen, nextSeq: fromSeq, state: null, lastSeq: null, subscribed: false, closed: false,
      finished: false, finish, abort: null, stop: new AbortController(), retryTimer: null, retries: 0, received: 0 };
    sub.close = () => {
      if (sub.closed) return;
      sub.closed = true;
      clearTimeout(sub.retryTimer);
      sub.stop.abort();
      sub.abort?.abort();
      // a handle closed after its stream ended must not take a later subscription to the same stream with it
      if (this.#subs.get(streamId) === sub) this.#subs.delete(streamId);
      if (!sub.finished) {
        if (sub.transport === 'ws' && sub.subscribed) this.#frame(this.#conn, { type: 'unsubscribe', streamId });
        sub.finish.resolve({ streamId, state: sub.state, lastSeq: sub.lastSeq, closed: true });
      }
    };
    sub.handle = {
      streamId, transport: chosen, done, close: sub.close,
      get nextSeq() { return sub.nextSeq; }, get state() { return sub.state; }, get lastSeq() { return sub.lastSeq; },
    };
    this.#subs.set(streamId, sub);
    if (chosen === 'ws') this.#subscribeWs(sub);
    else this.#runSse(sub);
    return sub.handle;
  }

  #subscribeWs(sub) {
    clearTimeout(sub.retryTimer);
    sub.retryTimer = null;
    if (sub.closed || sub.finished) return;
    sub.subscribed = this.#frame(this.#conn?.welcomed ? this.#conn : null, { type: 'subscribe', streamId: sub.streamId, fromSeq: sub.nextSeq });
  }

  #onChunk(sub, f) {
    if (!sub || sub.closed || sub.finished) return;
    if (f.seq < sub.nextSeq) return;
    if (f.seq > sub.nextSeq) {
      // never expected (the server sends each chunk in order); resumed from the first missing one
      this.#events.emit('error', { source: 'stream', streamId: sub.streamId, error: new WaterlineError('gap', `chunk ${f.seq} while ${sub.nextSeq} was next`) });
      if (sub.transport === 'ws') {
        this.#frame(this.#conn, { type: 'unsubscribe', streamId: sub.streamId });
        this.#subscribeWs(sub);
      } else sub.abort?.abort('gap');
      return;
    }
    sub.nextSeq = f.seq + 1;
    sub.received++;
    sub.retries = 0;
    const { type, ...chunk } = f;
    chunk.streamId = sub.streamId;
    this.#events.emit('chunk', chunk);
    this.#maybeFinished(sub);
  }

  #onStreamState(sub, f) {
    if (!sub || sub.closed || sub.finished) return;
    sub.state = f.state;
    sub.lastSeq = f.lastSeq;
    this.#events.emit('stream', { streamId: sub.streamId, state: f.state, lastSeq: f.lastSeq });
    this.#maybeFinished(sub);
  }

  #maybeFinished(sub) {
    if ((sub.state === 'complete' || sub.state === 'aborted') && sub.nextSeq > sub.lastSeq) {
      sub.finished = true;
      clearTimeout(sub.retryTimer);
      if (this.#subs.get(sub.streamId) === sub) this.#subs.delete(sub.streamId);
      sub.abort?.abort();
      sub.finish.resolve({ streamId: sub.streamId, state: sub.state, lastSeq: sub.lastSeq });
    }
  }

  #onStreamError(sub, f) {
    if (!sub) return this.#events.emit('error', { source: 'server', code: f.code, message: f.message, frame: f });
    if (RETRY.has(f.code)) {
      // rate_limited (too many streams followed, or over the rate) or unavailable: again, backing off further each time
      sub.subscribed = false;
      clearTimeout(sub.retryTimer);
      sub.retryTimer = setTimeout(() => this.#subscribeWs(sub), fullJitter(++sub.retries, this.#o.sendRetryInitialMs, this.#o.sendRetryMaxMs));
      return undefined;
    }
    this.#failStream(sub, new WaterlineError(f.code, f.message, { streamId: sub.streamId }));
    return undefined;
  }

  #failStream(sub, error) {
    sub.finished = true;
    clearTimeout(sub.retryTimer);
    if (this.#subs.get(sub.streamId) === sub) this.#subs.delete(sub.streamId);
    this.#events.emit('error', { source: 'stream', streamId: sub.streamId, error });
    sub.finish.reject(error);
  }

  async #runSse(sub) {
    let attempt = 0;
    while (!sub.closed && !sub.finished && !this.#closed) {
      sub.abort = new AbortController();
      try {
        const url = new URL(`/api/streams/${encodeURIComponent(sub.streamId)}/events`, this.url);
        url.searchParams.set('fromSeq', String(sub.nextSeq));
        const used = this.#token;
        const res = await this.#fetch(url, { headers: { Authorization: `Bearer ${used}`, Accept: 'text/event-stream' }, signal: sub.abort.signal });
        const refused = res.status === 403 || res.status === 404 || res.status === 400;
        if (!res.ok && !refused) res.body?.cancel().catch(() => { /* the answer is read from its status alone */ });
        if (res.status === 401) {
          this.#token = await this.#freshToken('expired');
          if (this.#token === used) {
            return this.#failStream(sub, new WaterlineError('unauthorized', 'the token was refused and the provider gave no other', { status: 401, streamId: sub.streamId }));
          }
        } else if (refused) {
          const body = await res.json().catch(() => ({}));
          return this.#failStream(sub, new WaterlineError(body.error ?? `http_${res.status}`, body.message, { status: res.status, streamId: sub.streamId }));
        } else if (res.ok) {
          for await (const ev of readEventStream(res.body)) {
            attempt = 0;
            const data = JSON.parse(ev.data);
            if (ev.event === 'chunk') this.#onChunk(sub, { ...data, seq: data.seq ?? Number(ev.id) });
            else if (ev.event === 'stream') this.#onStreamState(sub, data);
          }
        }
      } catch (error) {
        if (sub.closed || sub.finished) return undefined;
        if (error?.name !== 'AbortError') this.#events.emit('error', { source: 'stream', streamId: sub.streamId, error });
      }
      if (sub.closed || sub.finished) return undefined;
      await delay(fullJitter(attempt++, this.#o.backoffInitialMs, this.#o.backoffMaxMs), sub.stop.signal);
    }
    return undefined;
  }

  // ---------------------------------------------------------------- REST

  /**
   * An authenticated REST call on the server in use: JSON in and out. A 401 asks the token
   * provider once for a fresh token; a 429 waits its Retry-After (at most 3 times); a network
   * failure tries the next URL of the list. Other errors reject with a WaterlineError carrying
   * the answer's error code and status.
   */
  rest(method, path, body) {
    return this.#request(method, path, body === undefined ? {} : { json: body });
  }

  /**
   * rest()'s loop for any body: json (sent as JSON), or body (a Blob, File, ArrayBuffer, typed
   * array or string, sent as is with contentType). With response, the Response of a 2xx is
   * returned unread (for bytes); otherwise its JSON.
   */
  async #request(method, path, { json, body, contentType, response = false, timeoutMs = 15_000 } = {}) {
    let refreshed = false;
    let limited = 0;
    let failedOver = 0;
    for (;;) {
      const base = this.#conn?.welcomed ? this.#conn.base : this.url;
      let res;
      try {
        if (!this.#token) this.#token = await this.#freshToken('start');
        const headers = { Authorization: `Bearer ${this.#token}` };
        if (json !== undefined) headers['Content-Type'] = 'application/json';
        else if (body !== undefined && contentType) headers['Content-Type'] = contentType;
        res = await this.#fetch(new URL(path, base), {
          method,
          headers,
          body: json !== undefined ? JSON.stringify(json) : body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        if (++failedOver < this.#urls.length && !this.#conn?.welcomed) { this.#urlIndex++; continue; }
        throw new WaterlineError('unavailable', `${method} ${path}: ${error?.message ?? error}`, { cause: error });
      }
      if (res.status === 401 && !refreshed && typeof this.#tokenSource === 'function') {
        res.body?.cancel().catch(() => { /* only the status is read */ });
        refreshed = true;
        this.#token = await this.#freshToken('expired');
        continue;
      }
      if (res.status === 429 && limited++ < 3) {
        res.body?.cancel().catch(() => { /* only the status is read */ });
        const after = Number(res.headers.get('Retry-After'));
        await delay(Math.min(10_000, (Number.isFinite(after) && after > 0 ? after * 1000 : 1000)));
        continue;
      }
      if (response && res.ok) return res;
      const text = await res.text();
      let parsed = null;
      try { parsed = text ? JSON.parse(text) : null; } catch { parsed = { error: 'invalid', message: text }; }
      if (!res.ok) {
        // §2 says {"error"}, §9's endpoints {"code"}: either names the code
        const code = parsed?.error ?? parsed?.code ?? `http_${res.status}`;
        throw new WaterlineError(code, parsed?.message ?? res.statusText, { status: res.status, body: parsed });
      }
      return parsed;
    }
  }

  /** One message of a chat in its current state, from the server (GET /api/chats/{chatId}/messages/{messageId}). */
  getMessage(chatId, messageId) {
    return this.rest('GET', `/api/chats/${encodeURIComponent(chatId)}/messages/${encodeURIComponent(messageId)}`);
  }

  /**
   * Uploads a file to a chat (POST /api/chats/{chatId}/attachments), to be sent with
   * send(chatId, body, { attachments: [attachmentId] }). data: a Blob or File (its type and name
   * are used unless given), an ArrayBuffer, a typed array or a string. Resolves with
   * { attachmentId, contentType, size, sha256, name }; too_large (413) over the server's limit.
   */
  async upload(chatId, data, { name, contentType, timeoutMs = 300_000 } = {}) {
    if (data == null) throw new TypeError('upload: data is needed');
    const type = contentType || (typeof data.type === 'string' && data.type) || 'application/octet-stream';
    const fileName = name ?? (typeof data.name === 'string' && data.name !== '' ? data.name : undefined);
    const query = fileName ? `?name=${encodeURIComponent(fileName)}` : '';
    const answer = await this.#request('POST', `/api/chats/${encodeURIComponent(chatId)}/attachments${query}`,
      { body: data, contentType: type, timeoutMs });
    if (answer?.attachmentId) {
      this.#uploads.set(answer.attachmentId, { ...answer });
      // bounded: only the details of recent uploads are needed, for the sends that name them
      if (this.#uploads.size > 1000) this.#uploads.delete(this.#uploads.keys().next().value);
    }
    return answer;
  }

  /**
   * The URL of an attachment's bytes (GET /api/attachments/{attachmentId}) on the server in use.
   * It needs the token in the Authorization header (download() sends it); withToken puts it in
   * the query as access_token instead, for servers that take it there.
   */
  attachmentUrl(attachmentId, { withToken = false } = {}) {
    const base = this.#conn?.welcomed ? this.#conn.base : this.url;
    const url = new URL(`/api/attachments/${encodeURIComponent(attachmentId)}`, base);
    if (withToken && this.#token) url.searchParams.set('access_token', this.#token);
    return url.toString();
  }

  /** An attachment's bytes as a Blob (its type the one uploaded); not_found for a stranger, or a file deleted with its message. */
  async download(attachmentId, { timeoutMs = 300_000 } = {}) {
    const res = await this.#request('GET', `/api/attachments/${encodeURIComponent(attachmentId)}`, { response: true, timeoutMs });
    return res.blob();
  }
}
