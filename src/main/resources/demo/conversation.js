// The open chat's message log. The client hands over every message once, in seq order per chat
// (own sends included), so the log only appends; own sends not yet accepted sit below every
// accepted message, in the order they were made, and move up into place when their message
// comes. Each own message says how far it got: sending, sent (accepted), read by whom. The log
// is live for additions only, so a bubble is updated in place (never taken out and put back,
// which would be heard as a new message) and a change of its status is said through announce.
import { h, shortTime } from './dom.js';

/** Every stream of the session, followed once from its first chunk; views render from here. */
export class Streams {
  #client;
  #streams = new Map();
  #onChange;

  constructor(client, onChange) {
    this.#client = client;
    this.#onChange = onChange;
    client.on('chunk', (c) => {
      const s = this.#streams.get(c.streamId);
      if (!s) return;
      s.text += c.data ?? `[attachment: ${c.contentType ?? 'bytes'}, ${c.size ?? '?'} bytes]`;
      s.chunks++;
      this.#onChange(s);
    });
    client.on('stream', (e) => {
      const s = this.#streams.get(e.streamId);
      if (!s) return;
      s.state = e.state;
      s.lastSeq = e.lastSeq;
      this.#onChange(s);
    });
  }

  follow(streamId) {
    let s = this.#streams.get(streamId);
    if (s) return s;
    s = { streamId, text: '', chunks: 0, state: null, lastSeq: null, done: false, error: null };
    this.#streams.set(streamId, s);
    this.#client.subscribe(streamId, { fromSeq: 1 }).done.then(
      (r) => { s.done = !r.closed; if (r.state) s.state = r.state; this.#onChange(s); },
      (error) => { s.error = error?.message ?? String(error); this.#onChange(s); });
    return s;
  }

  /** open until every chunk is in; then complete or aborted (the stream frame can come before its last chunks). */
  static shownState(s) {
    if (s.error) return 'error';
    return s.done ? s.state : 'open';
  }
}

export class Conversation {
  #client;
  #me;
  #streams;
  #byMessage = new Map();
  #byCorrelation = new Map();
  #lastSeq = 0;
  #announce;
  #afterDismiss;
  #quiet = true;

  constructor({ client, me, chatId, streams, announce = () => {}, afterDismiss = () => {} }) {
    this.#client = client;
    this.#me = me;
    this.#streams = streams;
    this.#announce = announce;
    this.#afterDismiss = afterDismiss;
    this.chatId = chatId;
    // A new live region each time a chat opens: filling it before it is in the page keeps a
    // screen reader from reading the whole history out as if it had just arrived.
    this.log = h('div', { id: 'messages', class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions',
      'aria-labelledby': 'chat-title', 'data-testid': 'messages', tabindex: '0' });
    const messages = client.messages(chatId);
    if (messages.length > 0 && messages[0].seq > 1) {
      this.log.append(h('p', { class: 'note' }, `Messages 1 to ${messages[0].seq - 1} are not kept on this device.`));
    }
    for (const m of messages) this.add(m);
    for (const p of client.pending(chatId)) this.addPending(p);
    this.updateReads();
    // what the chat showed when it opened is not news; changes from here on are said
    this.#quiet = false;
  }

  get lastSeq() { return this.#lastSeq; }

  /** A message handed over by the client (history, live or an own send's). */
  add(m) {
    if (this.#byMessage.has(m.messageId)) return;
    const stick = this.#atBottom();
    const own = m.senderId === this.#me;
    // an own message opened some other way (a stream over REST) has no correlationId: it matches no send
    const correlated = own && typeof m.correlationId === 'string' && m.correlationId !== '';
    let el = correlated ? this.#byCorrelation.get(m.correlationId) : undefined;
    const shown = el !== undefined;
    if (shown) {
      // the server's time in place of the page's: the text only if it differs (a new text node is an addition)
      const time = el.querySelector('time');
      time.dateTime = m.sentAt;
      if (time.textContent !== shortTime(m.sentAt)) time.textContent = shortTime(m.sentAt);
    } else {
      el = this.#element(m, own);
    }
    el.dataset.seq = String(m.seq);
    el.dataset.messageId = m.messageId;
    this.#byMessage.set(m.messageId, el);
    if (correlated) this.#byCorrelation.set(m.correlationId, el);
    if (own && this.#setState(el, 'accepted') && shown) this.#say('Sent', el);
    // Accepted messages go above the own sends still on their way. A send of this page is already
    // above them unless it was accepted ahead of an earlier one: then, and only then, it moves.
    const before = this.#firstUnsent();
    if (!shown || (before && !(el.compareDocumentPosition(before) & Node.DOCUMENT_POSITION_FOLLOWING))) {
      this.log.insertBefore(el, before);
    }
    this.#lastSeq = Math.max(this.#lastSeq, m.seq);
    if (m.kind === 'stream' && m.streamId) this.renderStream(this.#streams.follow(m.streamId));
    if (own) this.updateReads();
    if (stick || own) this.#scrollDown();
  }

  /** An own send not yet accepted (just made, or restored from the store after a reload). */
  addPending(p) {
    if (this.#byCorrelation.has(p.correlationId)) return;
    const el = this.#element({ senderId: this.#me, body: p.body, sentAt: p.createdAt, kind: 'text' }, true);
    el.dataset.correlationId = p.correlationId;
    this.#byCorrelation.set(p.correlationId, el);
    this.#setState(el, 'sending');
    this.log.append(el);
    this.#scrollDown();
  }

  /** accepted before its message came (the client waits for a gap to fill): it is safe now, its place comes later. */
  accepted(e) {
    const el = this.#byCorrelation.get(e.correlationId);
    if (el && el.dataset.state === 'sending' && this.#setState(el, 'accepted')) this.#say('Sent', el);
  }

  retrying(e) {
    const el = this.#byCorrelation.get(e.correlationId);
    if (el && el.dataset.state === 'sending') this.#setState(el, 'sending', `Sending… (server said ${e.code}, trying again)`);
  }

  failed(e) {
    const el = this.#byCorrelation.get(e.correlationId);
    if (!el) return;
    const status = `Not sent: ${e.message || e.code} (${e.code})`;
    this.#setState(el, 'failed', status);
    this.#say(status, el);
    el.append(h('button', { type: 'button', class: 'dismiss', onclick: () => {
      this.#byCorrelation.delete(e.correlationId);
      el.remove();
      this.#afterDismiss();
    } }, 'Dismiss'));
  }

  gap(e) {
    this.log.insertBefore(h('p', { class: 'note' }, `Messages ${e.fromSeq} to ${e.toSeq} are no longer kept by the server.`), this.#firstUnsent());
  }

  /**
   * Own accepted messages say who has read them: a member has read seq n once their readSeq
   * reaches n. A change is said once, for the latest message it reached (quiet: not at all).
   */
  updateReads({ quiet = false } = {}) {
    const readSeq = this.#client.readSeq(this.chatId);
    const readers = Object.entries(readSeq).filter(([user]) => user !== this.#me);
    let latest = null;
    for (const el of this.log.querySelectorAll('.msg.own[data-seq]')) {
      if (el.dataset.state === 'failed') continue;
      const seq = Number(el.dataset.seq);
      const by = readers.filter(([, s]) => s >= seq).map(([user]) => user).sort();
      const changed = by.length > 0 ? this.#setState(el, 'read', `Read by ${by.join(', ')}`) : this.#setState(el, 'accepted');
      if (changed && by.length > 0) latest = el;
    }
    if (latest && !quiet) this.#say(latest.querySelector('.status').textContent, latest);
  }

  renderStream(s) {
    for (const el of this.log.querySelectorAll(`[data-stream-id="${CSS.escape(s.streamId)}"]`)) {
      const stick = this.#atBottom();
      const state = Streams.shownState(s);
      el.dataset.streamState = state;
      el.querySelector('.stream-text').textContent = s.text;
      const status = el.querySelector('.status');
      status.textContent = state === 'open' ? (s.chunks === 0 ? 'Waiting for the first words…' : 'Writing…')
        : state === 'complete' ? 'Complete'
          : state === 'aborted' ? 'Aborted: the writer stopped before the end'
            : `Could not follow this stream: ${s.error}`;
      if (stick) this.#scrollDown();
    }
  }

  #element(m, own) {
    const stream = m.kind === 'stream';
    const el = h('article', { class: `msg${own ? ' own' : ''}${stream ? ' stream' : ''}`, 'data-testid': 'message',
      'data-kind': m.kind ?? 'text', 'data-sender': m.senderId },
    h('p', { class: 'meta' }, h('span', { class: 'sender' }, own ? 'You' : m.senderId), ' ', this.#time(m.sentAt)),
    stream
      ? [h('p', { class: 'caption' }, m.body ? `Stream: ${m.body}` : 'Stream'), h('p', { class: 'body stream-text', 'data-testid': 'stream-text' })]
      : h('p', { class: 'body', 'data-testid': 'message-body' }, m.body),
    h('p', { class: 'status', 'data-testid': 'message-status' }));
    if (stream) el.dataset.streamId = m.streamId;
    return el;
  }

  #time(iso) {
    return h('time', { datetime: iso }, shortTime(iso));
  }

  /** Sets a bubble's state and status text; true if the text changed. */
  #setState(el, state, text) {
    el.dataset.state = state;
    if (el.classList.contains('stream')) return false;
    const status = el.querySelector('.status');
    const next = text ?? (state === 'sending' ? 'Sending…' : state === 'accepted' ? 'Sent' : '');
    if (status.textContent === next) return false;
    status.textContent = next;
    return true;
  }

  /** Announces a bubble's new status, with the start of its text to say which message it is. */
  #say(status, el) {
    if (this.#quiet) return;
    const chars = [...(el.querySelector('.body')?.textContent ?? '')];
    const start = chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
    this.#announce(`${status}: “${start}”`);
  }

  /** Where an accepted message goes: above every own send still on its way (a failed one stays where it was written). */
  #firstUnsent() {
    for (const el of this.#byCorrelation.values()) {
      if (el.dataset.seq === undefined && el.dataset.state !== 'failed' && el.isConnected) return el;
    }
    return null;
  }

  #atBottom() {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48;
  }

  #scrollDown() {
    this.log.scrollTop = this.log.scrollHeight;
  }
}
