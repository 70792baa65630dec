// The open chat's message log. The client hands over every message once, in seq order per chat
// (own sends included), so the log only appends; own sends not yet accepted sit below every
// accepted message, in the order they were made, and move up into place when their message
// comes. Each own message says how far it got: sending, sent (accepted), read by whom. The log
// is live for additions only, so a bubble is updated in place (never taken out and put back,
// which would be heard as a new message) and a change of its status is said through announce.
//
// A text message shows its current state as the client holds it (PROTOCOL.md §9): the last
// edit's text (marked edited), a deleted message as a note with nothing of it left, the message it
// answers quoted above it, its attachments (an image previewed, every file a download, both
// fetched with the token), and its reactions with their counts, the reader's own pressed. Each
// accepted text message has its actions: reply, react with a few emoji, and on one's own, edit
// and delete.
import { h, shortTime } from './dom.js';

/** The emoji offered on every message; others that members used show beside them. */
export const EMOJI = ['👍', '❤️', '😂', '🎉'];
/** Previewed in the page: raster images only (an SVG is a document), up to this size. */
const PREVIEWED = /^image\/(png|jpeg|gif|webp|avif|bmp)$/i;
const PREVIEW_MAX_BYTES = 8 * 1024 * 1024;
const SHOWN = new Set(['text', 'stream']);
/** attachmentId -> Promise of a data: URL (the page's policy lets images come from data: and this origin only) */
const previews = new Map();

export function sizeText(bytes) {
  if (typeof bytes !== 'number') return '';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A short line for a message: its text's start, or what it holds when it has no text. */
export function summary(m, max = 80) {
  if (!m) return 'a message that is not loaded';
  if (m.deleted) return 'a deleted message';
  if (m.kind === 'stream') return m.body ? `stream: ${m.body}` : 'a stream';
  const chars = [...(m.body ?? '')];
  if (chars.length > 0) return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
  const files = m.attachmentDetails ?? [];
  if (files.length > 0) return `📎 ${files.map((d) => d.name || d.contentType).join(', ')}`;
  return (m.attachments ?? []).length > 0 ? '📎 an attachment' : '';
}

/** Saves a Blob as a file, through a link to it (an object URL of this page). */
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name || 'attachment', hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

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
  #onReply;
  #quiet = true;
  /** messages of this chat fetched from the server for a quote (not held by the client) */
  #quoted = new Map();

  constructor({ client, me, chatId, streams, announce = () => {}, afterDismiss = () => {}, onReply = () => {} }) {
    this.#client = client;
    this.#me = me;
    this.#streams = streams;
    this.#announce = announce;
    this.#afterDismiss = afterDismiss;
    this.#onReply = onReply;
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
    for (const p of client.pending(chatId)) if ((p.op ?? 'send') === 'send') this.addPending(p);
    this.updateReads();
    // what the chat showed when it opened is not news; changes from here on are said
    this.#quiet = false;
  }

  get lastSeq() { return this.#lastSeq; }

  /**
   * Scrolls to a message and marks it found (a search result opened): true when it is shown, false
   * when this device does not hold it (yet).
   */
  reveal(messageId) {
    const el = this.#byMessage.get(messageId);
    if (!el) return false;
    for (const old of this.log.querySelectorAll('[data-found]')) old.removeAttribute('data-found');
    el.dataset.found = 'true';
    el.scrollIntoView({ block: 'center' });
    return true;
  }

  /** A message handed over by the client (history, live or an own send's); other entries are not shown. */
  add(m) {
    if (!SHOWN.has(m.kind ?? 'text')) {
      // an edit, delete or reaction changes a message (update); an unknown kind is not shown
      this.#lastSeq = Math.max(this.#lastSeq, m.seq);
      return;
    }
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
    if ((m.kind ?? 'text') === 'text') this.#render(el, m, own);
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

  /** A message held changed (an edit, a delete, a reaction): its bubble, and the quotes of it, show its new state. */
  update(m) {
    const el = this.#byMessage.get(m.messageId);
    if (el && el.dataset.kind === 'text') this.#render(el, m, m.senderId === this.#me);
    this.#quoted.delete(m.messageId);
    for (const reply of this.log.querySelectorAll(`[data-reply-to="${CSS.escape(m.messageId)}"]`)) this.#fillQuote(reply, m.messageId);
  }

  /** An own send not yet accepted (just made, or restored from the store after a reload). */
  addPending(p) {
    if (this.#byCorrelation.has(p.correlationId)) return;
    const el = this.#element({ senderId: this.#me, body: p.body, sentAt: p.createdAt, kind: 'text', replyTo: p.replyTo,
      attachments: p.attachments, attachmentDetails: p.attachmentDetails }, true);
    if (p.replyTo) this.#fillQuote(el, p.replyTo);
    this.#fillAttachments(el, { attachments: p.attachments ?? [], attachmentDetails: p.attachmentDetails ?? [] }, false);
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
      'data-kind': m.kind ?? 'text', 'data-sender': m.senderId, 'data-reply-to': m.replyTo },
    h('p', { class: 'meta' }, h('span', { class: 'sender' }, own ? 'You' : m.senderId), ' ', this.#time(m.sentAt),
      stream ? null : h('span', { class: 'edited', 'data-testid': 'edited', hidden: true }, '(edited)')),
    m.replyTo ? h('blockquote', { class: 'quote', 'data-testid': 'reply-quote' }) : null,
    stream
      ? [h('p', { class: 'caption' }, m.body ? `Stream: ${m.body}` : 'Stream'), h('p', { class: 'body stream-text', 'data-testid': 'stream-text' })]
      : [h('p', { class: 'body', 'data-testid': 'message-body' }, m.body),
        h('p', { class: 'deleted-note', 'data-testid': 'deleted-note', hidden: true }, 'This message was deleted.'),
        h('ul', { class: 'attachments', 'data-testid': 'attachments', hidden: true })],
    h('p', { class: 'status', 'data-testid': 'message-status' }));
    if (stream) el.dataset.streamId = m.streamId;
    return el;
  }

  /** Shows a text message's current state in its bubble; only what changed is touched. */
  #render(el, m, own) {
    const deleted = m.deleted === true;
    el.dataset.deleted = String(deleted);
    const body = el.querySelector('[data-testid="message-body"]');
    const text = deleted ? '' : m.body;
    if (body.textContent !== text) body.textContent = text;
    body.hidden = deleted || text === '';
    el.querySelector('[data-testid="deleted-note"]').hidden = !deleted;
    const edited = el.querySelector('[data-testid="edited"]');
    edited.hidden = deleted || !m.editedAt;
    if (m.editedAt) edited.title = `Edited ${new Date(m.editedAt).toLocaleString()}`;
    if (m.replyTo) this.#fillQuote(el, m.replyTo);
    this.#fillAttachments(el, deleted ? { attachments: [], attachmentDetails: [] } : m, true);
    this.#fillReactions(el, m, deleted);
    this.#fillActions(el, m, own, deleted);
  }

  #fillQuote(el, replyTo) {
    const quote = el.querySelector(':scope > .quote');
    if (!quote) return;
    const original = this.#client.message(this.chatId, replyTo) ?? this.#quoted.get(replyTo);
    if (!original && !this.#quoted.has(replyTo)) {
      // older than what the client holds: asked of the server once
      this.#quoted.set(replyTo, null);
      this.#client.getMessage(this.chatId, replyTo).then((m) => {
        this.#quoted.set(replyTo, m);
        for (const reply of this.log.querySelectorAll(`[data-reply-to="${CSS.escape(replyTo)}"]`)) this.#fillQuote(reply, replyTo);
      }, () => { /* gone or not visible: the quote says it is not loaded */ });
    }
    const who = original ? (original.senderId === this.#me ? 'You' : original.senderId) : '';
    const line = summary(original);
    const wanted = `${who}\u0000${line}`;
    if (quote.dataset.shown === wanted) return;
    quote.dataset.shown = wanted;
    quote.dataset.deleted = String(original?.deleted === true);
    quote.replaceChildren(h('span', { class: 'sr-only' }, 'In reply to '),
      who ? h('span', { class: 'quote-sender' }, who) : null,
      h('span', { class: 'quote-text', 'data-testid': 'reply-quote-text' }, line));
    quote.onclick = () => this.#byMessage.get(replyTo)?.scrollIntoView({ block: 'center', behavior: 'smooth' });
  }

  /** The files of a message: each a download, an image also previewed; active only once the message is accepted. */
  #fillAttachments(el, m, active) {
    const list = el.querySelector('[data-testid="attachments"]');
    if (!list) return;
    const ids = m.attachments ?? [];
    const details = new Map((m.attachmentDetails ?? []).map((d) => [d.attachmentId, d]));
    const key = `${active}|${ids.join(',')}|${[...details.keys()].join(',')}`;
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.hidden = ids.length === 0;
    list.replaceChildren(...ids.map((id) => {
      const d = details.get(id) ?? { attachmentId: id };
      const name = d.name || 'attachment';
      const item = h('li', { class: 'attachment', 'data-testid': 'attachment', 'data-attachment-id': id });
      if (active && PREVIEWED.test(d.contentType ?? '') && (d.size ?? 0) <= PREVIEW_MAX_BYTES) {
        const img = h('img', { class: 'preview', 'data-testid': 'attachment-image', alt: name });
        item.append(img);
        this.#preview(id).then((url) => { img.src = url; }, () => { img.alt = `${name} (the preview could not be loaded)`; });
      }
      const label = `${name}${d.size != null ? ` (${sizeText(d.size)})` : ''}`;
      item.append(active
        ? h('button', { type: 'button', class: 'download', 'data-testid': 'attachment-download', 'aria-label': `Download ${label}`,
          onclick: (ev) => this.#download(ev.currentTarget, d) }, `⬇ ${label}`)
        : h('span', { class: 'file' }, `📎 ${label}`));
      return item;
    }));
  }

  #preview(id) {
    let p = previews.get(id);
    if (!p) {
      p = this.#client.download(id).then(dataUrl);
      p.catch(() => previews.delete(id));
      previews.set(id, p);
    }
    return p;
  }

  async #download(button, d) {
    button.disabled = true;
    try {
      saveBlob(await this.#client.download(d.attachmentId), d.name || 'attachment');
    } catch (error) {
      this.#opStatus(button.closest('.msg'), `Could not download ${d.name || 'the file'}: ${error?.message ?? error}`, true);
    } finally {
      button.disabled = false;
    }
  }

  /** The offered emoji and any other in use, each a toggle with its count; updated in place, so focus stays. */
  /** The row under a message's text that holds its reactions and its actions. */
  #tools(el) {
    let tools = el.querySelector(':scope > .tools');
    if (!tools) {
      tools = h('div', { class: 'tools' });
      el.querySelector('.status').before(tools);
    }
    return tools;
  }

  #fillReactions(el, m, deleted) {
    let row = el.querySelector(':scope > .tools > .reactions');
    if (deleted) {
      row?.remove();
      return;
    }
    if (!row) {
      // not live: a count changing is not news to read out
      row = h('div', { class: 'reactions', role: 'group', 'aria-label': 'Reactions', 'aria-live': 'off', 'data-testid': 'reactions' });
      this.#tools(el).prepend(row);
    }
    const counts = m.reactions ?? {};
    const mine = new Set(m.myReactions ?? []);
    const emoji = [...EMOJI, ...Object.keys(counts).filter((e) => !EMOJI.includes(e))];
    for (const e of emoji) {
      let button = row.querySelector(`[data-emoji="${CSS.escape(e)}"]`);
      if (!button) {
        button = h('button', { type: 'button', class: 'reaction', 'data-testid': 'reaction', 'data-emoji': e,
          onclick: () => this.#react(el, e, button.getAttribute('aria-pressed') !== 'true') });
        row.append(button);
      }
      const n = counts[e] ?? 0;
      const text = n > 0 ? `${e} ${n}` : e;
      if (button.textContent !== text) button.textContent = text;
      button.dataset.count = String(n);
      button.setAttribute('aria-pressed', String(mine.has(e)));
      button.setAttribute('aria-label', `${e} ${n === 1 ? '1 reaction' : `${n} reactions`}${mine.has(e) ? ', yours' : ''}`);
    }
  }

  #fillActions(el, m, own, deleted) {
    let row = el.querySelector(':scope > .tools > .actions');
    if (deleted) {
      el.querySelector(':scope > .tools')?.remove();
      el.querySelector(':scope > .edit-form')?.remove();
      el.querySelector(':scope > .confirm')?.remove();
      return;
    }
    if (row) return;
    row = h('div', { class: 'actions', 'data-testid': 'message-actions' },
      h('button', { type: 'button', class: 'action', 'data-testid': 'reply', onclick: () => this.#onReply(this.#client.message(this.chatId, m.messageId) ?? m) }, 'Reply'),
      own ? h('button', { type: 'button', class: 'action', 'data-testid': 'edit', onclick: () => this.#startEdit(el) }, 'Edit') : null,
      own ? h('button', { type: 'button', class: 'action', 'data-testid': 'delete', onclick: () => this.#confirmDelete(el) }, 'Delete') : null);
    this.#tools(el).append(row);
  }

  #react(el, emoji, on) {
    this.#opStatus(el, '');
    this.#client.react(this.chatId, el.dataset.messageId, emoji, on)
      .catch((error) => this.#opStatus(el, `Reaction not saved: ${error?.message || error?.code} (${error?.code})`, true));
  }

  #startEdit(el) {
    if (el.querySelector(':scope > .edit-form')) return;
    const current = this.#client.message(this.chatId, el.dataset.messageId);
    if (!current || current.deleted) return;
    const body = el.querySelector('[data-testid="message-body"]');
    const id = `edit-${el.dataset.messageId}`;
    const box = h('textarea', { id, rows: '2', 'data-testid': 'edit-body' });
    box.value = current.body;
    const close = () => {
      form.remove();
      body.hidden = body.textContent === '';
      el.querySelector('[data-testid="edit"]')?.focus();
    };
    const form = h('form', { class: 'edit-form', 'data-testid': 'edit-form', novalidate: true },
      h('label', { for: id, class: 'sr-only' }, 'Edit message'), box,
      h('div', { class: 'edit-buttons' },
        h('button', { type: 'submit', 'data-testid': 'edit-save' }, 'Save'),
        h('button', { type: 'button', class: 'secondary', onclick: close }, 'Cancel')));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const text = box.value;
      const max = this.#client.limits.maxBodyChars ?? 4000;
      if (text.trim() === '') return this.#opStatus(el, 'A message cannot be edited to nothing: delete it instead.', true);
      if (text.length > max) return this.#opStatus(el, `A message is at most ${max} characters (this one has ${text.length}).`, true);
      close();
      if (text === current.body) return undefined;
      this.#opStatus(el, 'Saving the edit…');
      this.#client.edit(this.chatId, el.dataset.messageId, text).then(() => this.#opStatus(el, ''),
        (error) => this.#opStatus(el, `Edit not saved: ${error?.message || error?.code} (${error?.code})`, true));
      return undefined;
    });
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') close();
      else if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        form.requestSubmit();
      }
    });
    body.hidden = true;
    body.after(form);
    box.focus();
  }

  #confirmDelete(el) {
    if (el.querySelector(':scope > .confirm')) return;
    const keep = () => {
      confirm.remove();
      el.querySelector('[data-testid="delete"]')?.focus();
    };
    const confirm = h('div', { class: 'confirm', role: 'group', 'aria-label': 'Delete this message?' },
      h('span', {}, 'Delete for everyone?'),
      h('button', { type: 'button', class: 'danger', 'data-testid': 'delete-confirm', onclick: () => {
        confirm.remove();
        this.#opStatus(el, 'Deleting…');
        this.#client.delete(this.chatId, el.dataset.messageId).then(() => this.#opStatus(el, ''),
          (error) => this.#opStatus(el, `Not deleted: ${error?.message || error?.code} (${error?.code})`, true));
      } }, 'Delete'),
      h('button', { type: 'button', class: 'secondary', onclick: keep }, 'Keep'));
    el.querySelector('.status').before(confirm);
    confirm.querySelector('[data-testid="delete-confirm"]').focus();
  }

  /** What an edit, a delete or a reaction of this page is doing, or why it failed (said too). */
  #opStatus(el, text, failed = false) {
    if (!el) return;
    let p = el.querySelector(':scope > .op-status');
    if (!p) {
      p = h('p', { class: 'op-status', 'data-testid': 'op-status' });
      el.querySelector('.status').after(p);
    }
    p.dataset.failed = String(failed);
    if (p.textContent !== text) p.textContent = text;
    if (failed) this.#announce(text);
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
