// The Waterline demo: a chat page on the JavaScript client. Everything durable is the client's
// (its localStorage store keeps each chat's recent messages and every unsent send across a
// reload); this page only keeps who is signed in and how far they have read each chat, and
// renders what the client says.
import { WaterlineClient, localStorageStore, devToken } from '/client/index.js';
import { h, byId, coalesce, newId, shortTime, dayTime } from './dom.js';
import { Conversation, Streams, summary, sizeText } from './conversation.js';

const USER_KEY = 'waterline-demo:user';
const readKey = (user) => `waterline-demo:read:${user}`;
const tokenKey = (user) => `waterline-demo:token:${user}`;
const NARROW = window.matchMedia('(max-width: 44rem)');
/** The people whose presence the chat list asks for at most (the other member of each two-person chat). */
const PRESENCE_ASKED_MAX = 50;
/** The open chat's other members whose presence is written out under its title at most. */
const PRESENCE_SHOWN_MAX = 5;

let session = null;

/** The messages a chat list counts and previews: text and streams (edits, reactions and unknown kinds are not messages). */
const isShown = (m) => m.kind === 'text' || m.kind === 'stream';

/** A presence in words: online, last seen when, or offline (hidden, or never seen). */
function presenceText(p) {
  if (p.state === 'online') return 'online';
  return p.lastSeen ? `last seen ${dayTime(p.lastSeen)}` : 'offline';
}

function validName(name) {
  if (name.length < 1 || name.length > 128) return 'A name is 1 to 128 characters.';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'A name cannot hold control characters.';
  return null;
}

/** The chat id in the location hash; '' for none, or for one that is not valid percent-encoding (such as #%). */
function hashedChatId() {
  try {
    return decodeURIComponent(location.hash.slice(1));
  } catch {
    return '';
  }
}

/**
 * Says a change that shows only as text inside a message (sent, read by, not sent): the log is
 * live for additions only, so such a change would not be heard otherwise.
 */
function announce(text) {
  byId('announcer').textContent = text;
}

function notice(text) {
  byId('notice-text').textContent = text;
  byId('notice').hidden = !text;
}

function errorText(error) {
  if (!error) return 'unknown error';
  if (error.status === 404 && error.code === 'not_found' && /token/i.test(error.message ?? '')) {
    return 'this server gives no dev tokens, and the demo signs in with them (waterline.auth.dev-tokens)';
  }
  if (error.code === 'unavailable') return 'the server cannot be reached';
  return error.message && error.message !== error.code ? `${error.message} (${error.code ?? error.name})` : String(error.code ?? error);
}

class Session {
  me;
  client;
  streams;
  conversation = null;
  /** the message the composer answers, if any */
  replyTo = null;
  /** files attached in the composer: { key, name, state: 'uploading' | 'ready' | 'failed', detail, error } */
  files = [];
  #offs = [];
  #countdown = null;
  #marked;
  #chatDetails = new Map();
  /** The open conversation whose details could not be loaded for the server being out of reach. */
  #detailsMissed = null;
  #renderChats = coalesce(() => this.#drawChats());
  #closed = false;
  /** whose presence was asked of the server since the connection opened */
  #presenceAsked = new Set();
  #savingSetting = false;

  constructor(me) {
    this.me = me;
    try {
      this.#marked = JSON.parse(localStorage.getItem(readKey(me)) ?? '{}') ?? {};
    } catch {
      this.#marked = {};
    }
    this.client = new WaterlineClient({ token: () => this.#token(), store: localStorageStore() });
    this.streams = new Streams(this.client, (s) => this.conversation?.renderStream(s));
    this.#wire();
  }

  /**
   * A fresh dev token for every connection, as a real page would refresh a short-lived one; the
   * last one is kept and used when no fresh one can be had. A dev token comes from the server
   * itself, so without the kept one a reload while the server is out of reach would fail start()
   * and sign the user out, instead of showing the stored history and keeping the unsent messages.
   */
  async #token() {
    try {
      const token = await devToken(location.origin, this.me);
      // once signed out, a fetch that was under way must not put the removed token back
      if (!this.#closed && typeof token === 'string' && token !== '') localStorage.setItem(tokenKey(this.me), token);
      return token;
    } catch (error) {
      const kept = localStorage.getItem(tokenKey(this.me));
      if (kept) return kept;
      throw error;
    }
  }

  #on(type, fn) { this.#offs.push(this.client.on(type, fn)); }

  #wire() {
    this.#on('state', (e) => {
      this.#showConnection(e);
      // details that could not be loaded while the server was out of reach are asked for again
      if (e.state === 'open' && this.#detailsMissed === this.conversation && this.conversation) this.#loadDetails(this.conversation);
      if (e.state === 'open') {
        // presence frames are not replayed: what changed while disconnected is asked for again
        this.#presenceAsked.clear();
        this.#renderChats();
        this.#loadSettings();
      }
    });
    this.#on('presence', () => this.#renderChats());
    this.#on('chat', (e) => {
      this.#renderChats();
      // A chat met in a frame comes with no title or members: ask for them once.
      queueMicrotask(() => {
        const view = this.client.chats().find((c) => c.chatId === e.chatId);
        if (view && view.members.length === 0) this.#details(e.chatId).catch(() => {});
      });
    });
    this.#on('message', (m) => {
      if (this.conversation?.chatId === m.chatId) {
        this.conversation.add(m);
        this.markRead();
      }
      this.#renderChats();
    });
    this.#on('update', (e) => {
      if (this.conversation?.chatId === e.chatId) this.conversation.update(e.message);
      this.#renderChats();
    });
    this.#on('accepted', (e) => this.conversation?.chatId === e.chatId && this.conversation.accepted(e));
    this.#on('retry', (e) => this.conversation?.chatId === e.chatId && this.conversation.retrying(e));
    this.#on('failed', (e) => {
      if (this.conversation?.chatId === e.chatId) this.conversation.failed(e);
      else if ((e.op ?? 'send') === 'send') notice(`A message was not sent: ${e.message || e.code}`);
      else notice(`A change to a message was not saved (${e.op}): ${e.message || e.code}`);
    });
    this.#on('read', (e) => {
      if (this.conversation?.chatId === e.chatId) this.conversation.updateReads();
      if (e.userId === this.me) this.#renderChats();
    });
    this.#on('typing', (e) => this.conversation?.chatId === e.chatId && this.drawTyping());
    this.#on('gap', (e) => this.conversation?.chatId === e.chatId && this.conversation.gap(e));
    this.#on('synced', () => this.#renderChats());
    this.#on('error', (e) => {
      console.warn('waterline:', e.source, e.code ?? '', e.error ?? e.message ?? '');
      if (e.source === 'sync' && e.error?.status === 404 && e.chatId === this.conversation?.chatId) {
        notice('This chat is not available to you (any more).');
      }
    });
  }

  async start() {
    await this.client.start();
    this.#drawChats();
    // out of reach, the connection indicator says so already, and the client lists the chats on connecting
    this.client.listChats().then(() => this.#renderChats(), (error) => {
      if (error?.code !== 'unavailable') notice(`Could not list your chats: ${errorText(error)}`);
    });
  }

  async close() {
    this.#closed = true;
    for (const off of this.#offs) off();
    clearInterval(this.#countdown);
    await this.client.close();
  }

  // ------------------------------------------------------------ presence (PROTOCOL.md §10)

  /**
   * Asks the server for these people's presence, each once per connection (again: even if asked
   * already), and only while connected; the answers come back as presence events, as frames do.
   */
  #askPresence(userIds, again = false) {
    if (this.client.state !== 'open') return;
    for (const userId of userIds) {
      if (userId === this.me || (!again && this.#presenceAsked.has(userId))) continue;
      this.#presenceAsked.add(userId);
      this.client.getPresence(userId).catch((error) => console.warn('waterline: presence of', userId, error?.code ?? error));
    }
  }

  /** A dot beside a person: filled when online, hollow when offline; none while unknown. */
  #dot(userId) {
    const p = this.client.presenceOf(userId);
    if (!p) return null;
    const text = presenceText(p);
    return h('span', { class: 'presence-dot', 'data-testid': 'presence-dot', 'data-user-id': userId, 'data-state': p.state,
      role: 'img', 'aria-label': text, title: text });
  }

  /** The "Hide my presence" box shows the server's setting. */
  #loadSettings() {
    this.client.getSettings().then((settings) => {
      if (this.#closed || this.#savingSetting) return;
      const box = byId('hide-presence');
      box.checked = settings.presence === 'hidden';
      box.disabled = false;
    }, (error) => console.warn('waterline: settings', error?.code ?? error));
  }

  async setPresenceHidden(hidden) {
    const box = byId('hide-presence');
    box.disabled = true;
    this.#savingSetting = true;
    try {
      const settings = await this.client.setPresenceHidden(hidden);
      if (!this.#closed) box.checked = settings.presence === 'hidden';
    } catch (error) {
      box.checked = !hidden;
      notice(`Could not change who sees you online: ${errorText(error)}`);
    } finally {
      this.#savingSetting = false;
      if (!this.#closed) box.disabled = false;
    }
  }

  async #details(chatId) {
    const chat = await this.client.getChat(chatId);
    this.#chatDetails.set(chatId, chat);
    this.#renderChats();
    return chat;
  }

  // ------------------------------------------------------------ connection indicator

  #showConnection(e) {
    const el = byId('connection');
    const label = byId('connection-label');
    const detail = byId('connection-detail');
    clearInterval(this.#countdown);
    el.dataset.state = e.state;
    detail.textContent = '';
    byId('take-back').hidden = e.state !== 'superseded';
    switch (e.state) {
      case 'connecting': label.textContent = 'Connecting…'; break;
      case 'open': label.textContent = 'Connected'; break;
      case 'superseded': label.textContent = 'Paused: this account is in use in another tab or window'; break;
      case 'closed': label.textContent = 'Signed out'; break;
      case 'reconnecting': {
        label.textContent = 'Connection lost, reconnecting';
        if (e.delayMs == null) break;
        // the countdown is aria-hidden: a screen reader hears the state once, not every second
        const until = Date.now() + e.delayMs;
        const tick = () => {
          const s = Math.ceil((until - Date.now()) / 1000);
          detail.textContent = s > 0 ? ` in ${s} s` : ' now…';
          if (s <= 0) clearInterval(this.#countdown);
        };
        tick();
        this.#countdown = setInterval(tick, 250);
        break;
      }
      default: label.textContent = 'Not connected';
    }
  }

  // ------------------------------------------------------------ chat list

  #name(chat) {
    if (chat.title) return chat.title;
    const others = chat.members.filter((m) => m !== this.me);
    return others.length > 0 ? others.join(', ') : 'Just you';
  }

  #readUpTo(chatId) {
    return Math.max(this.client.readSeq(chatId)[this.me] ?? 0, this.#marked[chatId] ?? 0);
  }

  #drawChats() {
    const list = byId('chat-list');
    const openId = this.conversation?.chatId;
    // unread and the last message come from the server's chat list (§10), kept live by the client;
    // a chat it has not said anything of yet falls back to the messages this page holds
    const chats = this.client.chats().map((c) => {
      const held = this.client.messages(c.chatId).filter(isShown);
      const last = c.lastMessage ?? held.at(-1);
      const unread = c.unread > 0 && c.seq <= this.#readUpTo(c.chatId) && c.seq > 0 ? 0 : c.unread;
      return { ...c, last, unread };
    });
    // newest activity first; a chat with no message yet (just made) above them all
    chats.sort((a, b) => (b.last?.sentAt ?? '\uffff').localeCompare(a.last?.sentAt ?? '\uffff') || a.chatId.localeCompare(b.chatId));
    // the other member of a two-person chat has a dot beside the chat's name
    const peerOf = (c) => (c.members.length === 2 && c.members.includes(this.me) ? c.members.find((m) => m !== this.me) : null);
    this.#askPresence(chats.map(peerOf).filter(Boolean).slice(0, PRESENCE_ASKED_MAX));
    const items = chats.map((c) => {
      const name = this.#name(c);
      const peer = peerOf(c);
      const preview = c.last ? `${c.last.senderId === this.me ? 'You' : c.last.senderId}: ${c.last.kind === 'stream' ? '(a stream)' : summary(c.last)}` : 'No messages yet';
      const unread = c.chatId !== openId && c.unread > 0
        ? h('span', { class: 'badge', 'data-testid': 'unread' }, String(c.unread), h('span', { class: 'sr-only' }, ' unread'))
        : null;
      return h('li', {},
        h('button', { type: 'button', class: 'chat-item', 'data-testid': 'chat-item', 'data-chat-id': c.chatId,
          'aria-current': c.chatId === openId ? 'true' : null, onclick: () => this.open(c.chatId) },
        h('span', { class: 'chat-name' }, peer ? this.#dot(peer) : null, name, unread),
        h('span', { class: 'chat-preview' }, preview, c.last ? h('time', { datetime: c.last.sentAt }, ' · ', shortTime(c.last.sentAt)) : null)));
    });
    // a redraw must not take the keyboard focus away from the chat it was on
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.chatId : null;
    list.replaceChildren(...items);
    if (focused) list.querySelector(`[data-chat-id="${CSS.escape(focused)}"]`)?.focus();
    byId('no-chats').hidden = items.length > 0;
    byId('chat-count').textContent = String(items.length);
    if (this.conversation) this.#drawHeader();
  }

  #drawHeader() {
    const chatId = this.conversation.chatId;
    const chat = this.#chatDetails.get(chatId) ?? this.client.chats().find((c) => c.chatId === chatId);
    byId('chat-title').textContent = chat ? this.#name(chat) : 'Chat';
    const members = chat?.members ?? [];
    const others = members.filter((m) => m !== this.me);
    this.#askPresence(others);
    // each other member with a dot; the line below says who is online and when the others were last seen
    const names = members.map((m) => h('span', { class: 'member', 'data-testid': 'member', 'data-user-id': m },
      m === this.me ? `${m} (you)` : [this.#dot(m), m]));
    byId('chat-members').replaceChildren(...(names.length > 0 ? ['Members: ', ...names.flatMap((n, i) => (i > 0 ? [', ', n] : [n]))] : []));
    const known = others.map((m) => this.client.presenceOf(m)).filter(Boolean);
    const shown = known.slice(0, PRESENCE_SHOWN_MAX).map((p) => h('span', { class: 'presence', 'data-testid': 'presence', 'data-user-id': p.userId,
      'data-state': p.state }, `${p.userId}: `, p.state !== 'online' && p.lastSeen ? h('time', { datetime: p.lastSeen }, presenceText(p)) : presenceText(p)));
    if (known.length > shown.length) shown.push(`and ${known.length - shown.length} more`);
    byId('chat-presence').replaceChildren(...shown.flatMap((n, i) => (i > 0 ? [' · ', n] : [n])));
  }

  // ------------------------------------------------------------ search

  /** Searches the user's chats (PROTOCOL.md §10); more appends the page below the one shown. */
  async search(q, more = false) {
    const list = byId('search-results');
    const page = await this.client.search(q, { limit: 20, before: more ? this.searchNext : undefined });
    if (!more) list.replaceChildren();
    this.searchNext = page.next;
    this.searchQ = q;
    for (const r of page.results) {
      const chat = this.#chatDetails.get(r.chatId) ?? this.client.chats().find((c) => c.chatId === r.chatId);
      const snippet = [];
      let at = 0;
      for (const [start, end] of r.highlights) {
        snippet.push(r.snippet.slice(at, start), h('mark', {}, r.snippet.slice(start, end)));
        at = end;
      }
      snippet.push(r.snippet.slice(at));
      list.append(h('li', {},
        h('button', { type: 'button', class: 'search-result', 'data-testid': 'search-result', 'data-message-id': r.messageId,
          onclick: () => this.openAt(r.chatId, r.messageId) },
        h('span', { class: 'search-where' }, `${chat ? this.#name(chat) : 'A chat'} · ${r.senderId} · ${shortTime(r.sentAt)}`),
        h('span', { class: 'search-snippet' }, snippet))));
    }
    if (!more && page.results.length === 0) list.append(h('li', { class: 'hint' }, 'Nothing found.'));
    list.hidden = false;
    byId('search-more').hidden = !page.next;
  }

  /** Opens a chat at a message: scrolled to and marked, once the chat's messages hold it. */
  openAt(chatId, messageId) {
    if (this.conversation?.chatId !== chatId) this.open(chatId);
    const conversation = this.conversation;
    if (conversation.reveal(messageId)) return;
    // the chat's history may still be arriving: look again as messages come, for a while
    const watch = new MutationObserver(() => {
      if (this.conversation !== conversation || conversation.reveal(messageId)) watch.disconnect();
    });
    watch.observe(conversation.log, { childList: true, subtree: true });
    setTimeout(() => {
      watch.disconnect();
      if (this.conversation === conversation && !conversation.reveal(messageId)) {
        notice('That message is older than what this device keeps of the chat.');
      }
    }, 5000);
  }

  // ------------------------------------------------------------ the open chat

  open(chatId) {
    const conversation = new Conversation({ client: this.client, me: this.me, chatId, streams: this.streams, announce,
      // the dismissed message held the focus: it goes where the next message is written
      afterDismiss: () => byId('composer-body').focus(),
      onReply: (m) => this.startReply(m) });
    if (this.conversation?.chatId !== chatId) {
      // a reply and attached files belong to the chat they were started in
      this.cancelReply();
      this.files = [];
      this.drawFiles();
    }
    this.conversation = conversation;
    // opening a chat asks afresh for its other members' presence: those known now here, the rest once its details are in (#drawHeader)
    const chat = this.#chatDetails.get(chatId) ?? this.client.chats().find((c) => c.chatId === chatId);
    this.#askPresence((chat?.members ?? []).filter((m) => m !== this.me), true);
    byId('messages').replaceWith(conversation.log);
    byId('no-chat').hidden = true;
    byId('chat-open').hidden = false;
    if (location.hash.slice(1) !== encodeURIComponent(chatId)) history.replaceState(null, '', `#${encodeURIComponent(chatId)}`);
    this.#drawChats();
    setChatsExpanded(false);
    // On a phone the chat list, which held the focused button, has just folded away, and a focused
    // box would pull up the keyboard over the chat: the focus goes to the chat's heading instead.
    if (NARROW.matches) byId('chat-title').focus();
    else byId('composer-body').focus({ preventScroll: true });
    this.markRead();
    this.drawTyping();
    this.#loadDetails(conversation);
  }

  /** "bob is typing…" under the open chat's messages, from the client's typists. */
  drawTyping() {
    const who = this.conversation ? this.client.typists(this.conversation.chatId) : [];
    const line = byId('typing');
    if (who.length === 0) line.textContent = '';
    else if (who.length === 1) line.textContent = `${who[0]} is typing…`;
    else if (who.length <= 3) line.textContent = `${who.slice(0, -1).join(', ')} and ${who.at(-1)} are typing…`;
    else line.textContent = `${who.length} people are typing…`;
  }

  #loadDetails(conversation) {
    this.#detailsMissed = null;
    this.#details(conversation.chatId).then(() => {
      // read positions the stored copy did not have yet: not news to announce
      if (this.conversation === conversation) conversation.updateReads({ quiet: true });
    }, (error) => {
      if (this.conversation !== conversation) return;
      // out of reach: the connection indicator says so, and the details are asked for again on connecting
      if (error?.code === 'unavailable') this.#detailsMissed = conversation;
      else notice(`Could not load this chat: ${errorText(error)}`);
    });
  }

  /** Says the open chat is read up to its last message, when someone can see it. */
  markRead() {
    const c = this.conversation;
    if (!c || document.visibilityState !== 'visible' || c.lastSeq === 0) return;
    // Always asked of the client, which sends a receipt only if it raises what this client instance
    // sent: a receipt made before the welcome and lost with a reload goes out again from here.
    this.client.markRead(c.chatId, c.lastSeq);
    if ((this.#marked[c.chatId] ?? 0) >= c.lastSeq) return;
    this.#marked[c.chatId] = c.lastSeq;
    localStorage.setItem(readKey(this.me), JSON.stringify(this.#marked));
    this.#renderChats();
  }

  send(body) {
    const chatId = this.conversation.chatId;
    const correlationId = newId();
    const options = { correlationId };
    if (this.replyTo) options.replyTo = this.replyTo.messageId;
    const ready = this.files.filter((f) => f.state === 'ready');
    if (ready.length > 0) options.attachments = ready.map((f) => f.detail.attachmentId);
    // the client stores the send before it goes out; the promise settles through the events too
    this.client.send(chatId, body, options).catch(() => {});
    const pending = this.client.pending(chatId).find((p) => p.correlationId === correlationId);
    this.conversation.addPending(pending ?? { correlationId, body, createdAt: new Date().toISOString(), ...options });
    this.cancelReply();
    this.files = [];
    this.drawFiles();
  }

  /** The composer answers m: a quote of it above the message box until sent or cancelled. */
  startReply(m) {
    this.replyTo = m;
    byId('reply-bar').hidden = false;
    byId('reply-sender').textContent = m.senderId === this.me ? 'yourself' : m.senderId;
    byId('reply-text').textContent = summary(m);
    byId('composer-body').focus();
  }

  cancelReply() {
    this.replyTo = null;
    byId('reply-bar').hidden = true;
    byId('reply-text').textContent = '';
  }

  /** Uploads files as soon as they are picked: sent with the next message, which may then have no text. */
  attach(fileList) {
    const chatId = this.conversation?.chatId;
    if (!chatId) return;
    const max = 10;
    for (const file of fileList) {
      if (this.files.length >= max) {
        byId('composer-error').textContent = `At most ${max} files go with one message.`;
        break;
      }
      const f = { key: newId(), name: file.name || 'file', size: file.size, state: 'uploading', detail: null, error: null };
      this.files.push(f);
      this.client.upload(chatId, file, { name: f.name, contentType: file.type || undefined }).then((detail) => {
        f.state = 'ready';
        f.detail = detail;
      }, (error) => {
        f.state = 'failed';
        f.error = error?.status === 413 || error?.code === 'too_large' ? 'too large' : (error?.message || error?.code || 'failed');
      }).finally(() => this.drawFiles());
    }
    this.drawFiles();
  }

  drawFiles() {
    const list = byId('composer-files');
    list.replaceChildren(...this.files.map((f) => h('li', { class: 'file-chip', 'data-testid': 'composer-file', 'data-state': f.state },
      h('span', {}, `📎 ${f.name} (${sizeText(f.size)})`, f.state === 'uploading' ? ' — uploading…' : f.state === 'failed' ? ` — not uploaded: ${f.error}` : ''),
      h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove ${f.name}`, onclick: () => {
        this.files = this.files.filter((x) => x !== f);
        this.drawFiles();
        byId('composer-body').focus();
      } }, '×'))));
    list.hidden = this.files.length === 0;
  }

  async createChat(members, title) {
    const chat = await this.client.createChat(members, title || undefined);
    this.#chatDetails.set(chat.chatId, chat);
    this.open(chat.chatId);
  }

  async addMember(userId) {
    const chat = await this.client.addMember(this.conversation.chatId, userId);
    this.#chatDetails.set(chat.chatId, chat);
    this.#drawChats();
  }

  async askBot() {
    try {
      await this.client.rest('POST', '/api/dev/bots/echo', { chatId: this.conversation.chatId });
    } catch (error) {
      // the bot answers only where waterline.streams.dev-bots is on (the zero-configuration mode)
      if (error.status === 404) throw new Error('the echo bot is off on this server (waterline.streams.dev-bots)');
      throw error;
    }
  }
}

function setChatsExpanded(expanded) {
  byId('chat-panel').classList.toggle('collapsed', !expanded);
  byId('toggle-chats').setAttribute('aria-expanded', String(expanded));
}

function showSignedIn(me) {
  byId('sign-in-view').hidden = true;
  byId('chat-view').hidden = false;
  byId('who').hidden = false;
  byId('me').textContent = me;
  byId('connection-box').hidden = false;
  setChatsExpanded(true);
}

function showSignedOut(name = '') {
  byId('hide-presence').checked = false;
  byId('hide-presence').disabled = true;
  byId('sign-in-view').hidden = false;
  byId('chat-view').hidden = true;
  byId('who').hidden = true;
  byId('connection-box').hidden = true;
  byId('chat-open').hidden = true;
  byId('no-chat').hidden = false;
  byId('chat-list').replaceChildren();
  byId('sign-in-name').value = name;
  byId('sign-in-name').focus();
}

async function signIn(name) {
  const s = new Session(name);
  try {
    await s.start();
  } catch (error) {
    await s.close().catch(() => {});
    throw error;
  }
  session = s;
  localStorage.setItem(USER_KEY, name);
  showSignedIn(name);
  const hashed = hashedChatId();
  if (hashed) s.open(hashed);
}

async function signOut() {
  const s = session;
  session = null;
  const closing = s?.close();
  localStorage.removeItem(USER_KEY);
  if (s) localStorage.removeItem(tokenKey(s.me));
  history.replaceState(null, '', location.pathname);
  notice('');
  announce('');
  showSignedOut(s?.me);
  await closing;
}

/** Runs a form's action with its button disabled, and says what went wrong next to the form. */
function formAction(form, errorEl, action) {
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    errorEl.textContent = '';
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      errorEl.textContent = error?.userText ?? `Failed: ${errorText(error)}`;
    } finally {
      button.disabled = false;
    }
  });
}

function userError(text) {
  return Object.assign(new Error(text), { userText: text });
}

function setUp() {
  formAction(byId('sign-in'), byId('sign-in-error'), async () => {
    const name = byId('sign-in-name').value.trim();
    const invalid = validName(name);
    if (invalid) throw userError(invalid);
    try {
      await signIn(name);
    } catch (error) {
      throw userError(`Could not sign in: ${errorText(error)}`);
    }
  });

  byId('sign-out').addEventListener('click', () => { signOut(); });
  byId('hide-presence').addEventListener('change', (ev) => session?.setPresenceHidden(ev.target.checked));
  byId('take-back').addEventListener('click', () => session?.client.reconnect());
  byId('notice-close').addEventListener('click', () => notice(''));
  byId('toggle-chats').addEventListener('click', () => {
    setChatsExpanded(byId('toggle-chats').getAttribute('aria-expanded') !== 'true');
  });

  formAction(byId('new-chat'), byId('new-chat-error'), async () => {
    const members = byId('new-chat-members').value.split(',').map((m) => m.trim()).filter(Boolean);
    for (const m of members) {
      const invalid = validName(m);
      if (invalid) throw userError(`"${m}": ${invalid}`);
    }
    await session.createChat(members, byId('new-chat-title').value.trim());
    byId('new-chat').reset();
  });

  formAction(byId('add-member'), byId('add-member-error'), async () => {
    const userId = byId('add-member-name').value.trim();
    const invalid = validName(userId);
    if (invalid) throw userError(invalid);
    await session.addMember(userId);
    byId('add-member').reset();
  });

  formAction(byId('ask-bot-form'), byId('ask-bot-error'), () => session.askBot());
  formAction(byId('search'), byId('search-error'), async () => {
    const q = byId('search-q').value.trim();
    if (!q) throw userError('Type the words to search for.');
    await session.search(q);
  });
  byId('search-more').addEventListener('click', () => {
    session?.search(session.searchQ, true).catch((error) => { byId('search-error').textContent = `Failed: ${errorText(error)}`; });
  });

  const composer = byId('composer');
  const body = byId('composer-body');
  composer.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = body.value;
    const max = session.client.limits.maxBodyChars ?? 4000;
    byId('composer-error').textContent = '';
    if (session.files.some((f) => f.state === 'uploading')) {
      byId('composer-error').textContent = 'A file is still uploading: send once it is done.';
      return;
    }
    const withFiles = session.files.some((f) => f.state === 'ready');
    if (text.trim() === '' && !withFiles) return;
    if (text.length > max) {
      byId('composer-error').textContent = `A message is at most ${max} characters (this one has ${text.length}).`;
      return;
    }
    session.send(text);
    body.value = '';
  });
  // every keystroke says so; the client sends at most one typing frame per chat every 3 s
  body.addEventListener('input', () => {
    if (session?.conversation && body.value !== '') session.client.typing(session.conversation.chatId);
  });
  body.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      composer.requestSubmit();
    } else if (ev.key === 'Escape' && session?.replyTo) session.cancelReply();
  });
  byId('reply-cancel').addEventListener('click', () => {
    session?.cancelReply();
    body.focus();
  });
  const file = byId('composer-file');
  file.addEventListener('change', () => {
    session?.attach([...file.files]);
    file.value = '';
  });

  document.addEventListener('visibilitychange', () => session?.markRead());
  window.addEventListener('hashchange', () => {
    const chatId = hashedChatId();
    if (session && chatId && chatId !== session.conversation?.chatId) session.open(chatId);
  });
  NARROW.addEventListener('change', () => setChatsExpanded(!session?.conversation));

  const remembered = localStorage.getItem(USER_KEY);
  if (!remembered) {
    showSignedOut();
    return;
  }
  signIn(remembered).catch((error) => {
    showSignedOut(remembered);
    byId('sign-in-error').textContent = `Could not sign in again as ${remembered}: ${errorText(error)}`;
  });
}

setUp();
