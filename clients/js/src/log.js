// A chat's messages in their current state (PROTOCOL.md §9: a chat is one log). Every entry of
// the chat goes through apply(): a `text` or `stream` entry becomes a message; an `edit`, a
// `delete` or a `reaction` changes the message it targets; an entry of a kind this client does
// not know is kept in order and changes nothing.
//
// What makes it safe to feed from live frames, history pages and own accepted sends at once:
//   - an entry applies once: a message already held (by messageId or seq) is a duplicate, and a
//     change entry already applied (by messageId) is one too;
//   - the result does not depend on the order of arrival: an edit applies only over an older
//     edit (by seq), a delete is for good, and each user's reaction with each emoji is the one
//     of that user's latest reaction entry for it (by seq); a change whose target is not held yet
//     waits for it, and is applied when it comes;
//   - reactions are counted from the reaction entries themselves, never from a history page's
//     counts: a page reads the counts at some moment the client cannot place among the entries
//     that follow, so adding the entries to those counts could count one twice. The entries of a
//     message all come after it in seq, and a client hands over every seq of a chat with none
//     missing, so it sees each of them. The body and `deleted` of a history page are taken (a
//     later edit entry still wins, by time against the page's `editedAt`).
// Everything kept is plain JSON: toJSON() is what a client stores, and new ChatLog({ records })
// takes it back.

const CHANGES = new Set(['edit', 'delete', 'reaction']);
const PLAIN = new Set(['text', 'stream']);

function copy(value) {
  return value == null ? value : JSON.parse(JSON.stringify(value));
}

/** The kinds that are changes to another entry. */
export function isChange(kind) {
  return CHANGES.has(kind);
}

export class ChatLog {
  #me;
  #keep;
  /** messages and entries of unknown kinds, ascending seq */
  #records = [];
  #byId = new Map();
  #bySeq = new Map();
  /** changes waiting for their target: targetId -> Map(messageId -> entry) */
  #waiting = new Map();
  #waitingCount = 0;
  /** change entries applied, by messageId (insertion order, bounded) */
  #applied = new Map();

  /**
   * @param {{ me?: string|null, keep?: number, records?: object[] }} options me: the reader (for
   *   myReactions); keep: at most this many messages are kept (the oldest go first); records: a
   *   previous toJSON()
   */
  constructor({ me = null, keep = Infinity, records = [] } = {}) {
    this.#me = me;
    this.#keep = keep;
    for (const r of records ?? []) {
      if (!r || typeof r.seq !== 'number' || typeof r.messageId !== 'string') continue;
      if (isChange(r.kind)) this.apply(r); // stored by an earlier version, which kept every entry as it came
      else if (!this.#byId.has(r.messageId) && !this.#bySeq.has(r.seq)) this.#insert(copy(r));
    }
    this.#trim();
  }

  set me(userId) { this.#me = userId; }

  /** How many messages (and entries of unknown kinds) are held. */
  get size() { return this.#records.length; }

  /**
   * Applies one entry (a `message` frame's fields, a history page's entry, or an own accepted
   * one). Returns `entry`: the entry as handed over (for a message, the message in its current
   * state), or null when it was a duplicate; `updated`: the messages this entry changed, in their
   * new state.
   */
  apply(input) {
    const entry = { ...input, kind: input.kind ?? 'text' };
    if (isChange(entry.kind)) return this.#change(entry);
    if (this.#byId.has(entry.messageId) || this.#bySeq.has(entry.seq)) return { entry: null, updated: [] };
    const r = this.#record(entry);
    this.#insert(r);
    const early = this.#waiting.get(r.messageId);
    if (early) {
      this.#waiting.delete(r.messageId);
      this.#waitingCount -= early.size;
      for (const c of [...early.values()].sort((a, b) => a.seq - b.seq)) {
        this.#remember(c);
        this.#applyTo(r, c);
      }
    }
    this.#trim();
    return { entry: this.#view(r), updated: [] };
  }

  /** One message (or unknown entry) in its current state. */
  get(messageId) {
    const r = this.#byId.get(messageId);
    return r ? this.#view(r) : undefined;
  }

  /** Every message held (and every entry of an unknown kind), ascending seq, in their current state. */
  messages() {
    return this.#records.map((r) => this.#view(r));
  }

  /** What a store keeps: the records with the state that makes apply() idempotent. */
  toJSON() {
    return copy(this.#records);
  }

  // ------------------------------------------------------------------ internals

  #record(entry) {
    const r = copy(entry);
    if (!PLAIN.has(r.kind)) return r;
    // a history page's current state: body and deleted are taken; counts are not (see the top)
    delete r.reactions;
    delete r.myReactions;
    if (r.editedAt) r.pageEditedAt = r.editedAt;
    if (r.deleted) this.#erase(r);
    else delete r.deleted;
    return r;
  }

  #insert(r) {
    const list = this.#records;
    if (list.length === 0 || list[list.length - 1].seq < r.seq) list.push(r);
    else {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid].seq < r.seq) lo = mid + 1; else hi = mid;
      }
      list.splice(lo, 0, r);
    }
    this.#byId.set(r.messageId, r);
    this.#bySeq.set(r.seq, r);
  }

  #trim() {
    while (this.#records.length > this.#keep) {
      const gone = this.#records.shift();
      this.#byId.delete(gone.messageId);
      this.#bySeq.delete(gone.seq);
    }
    // changes whose target never came (it is older than what is kept, or gone to retention)
    const bound = Math.max(64, Number.isFinite(this.#keep) ? this.#keep : 10_000);
    while (this.#waitingCount > bound) {
      let oldest = null;
      for (const [targetId, m] of this.#waiting) {
        for (const c of m.values()) if (!oldest || c.seq < oldest.c.seq) oldest = { targetId, c };
      }
      const m = this.#waiting.get(oldest.targetId);
      m.delete(oldest.c.messageId);
      if (m.size === 0) this.#waiting.delete(oldest.targetId);
      this.#waitingCount--;
    }
    while (this.#applied.size > bound * 4) this.#applied.delete(this.#applied.keys().next().value);
  }

  #remember(c) {
    this.#applied.set(c.messageId, c.seq);
  }

  #change(entry) {
    if (this.#applied.has(entry.messageId)) return { entry: null, updated: [] };
    const target = this.#byId.get(entry.targetId);
    if (!target) {
      let m = this.#waiting.get(entry.targetId);
      if (m?.has(entry.messageId)) return { entry: null, updated: [] };
      if (!m) this.#waiting.set(entry.targetId, (m = new Map()));
      m.set(entry.messageId, copy(entry));
      this.#waitingCount++;
      this.#trim();
      return { entry: copy(entry), updated: [] };
    }
    this.#remember(entry);
    const changed = this.#applyTo(target, entry);
    this.#trim();
    return { entry: copy(entry), updated: changed ? [this.#view(target)] : [] };
  }

  /** Applies a change to its target; true if the target's state changed. */
  #applyTo(r, c) {
    if (!PLAIN.has(r.kind)) return false;
    switch (c.kind) {
      case 'delete':
        if (r.deleted) return false;
        r.deletedSeq = c.seq;
        this.#erase(r);
        return true;
      case 'edit': {
        if (r.deleted || r.kind !== 'text') return false;
        if ((r.editSeq ?? 0) >= c.seq) return false;
        r.editSeq = c.seq;
        // a history page that already shows a later edit keeps its body (an edit's time is its entry's sentAt)
        if (r.pageEditedAt && c.sentAt && c.sentAt < r.pageEditedAt) return false;
        const changed = r.body !== c.body || r.editedAt !== c.sentAt;
        r.body = c.body;
        r.editedAt = c.sentAt;
        return changed;
      }
      case 'reaction': {
        if (r.deleted || typeof c.emoji !== 'string' || typeof c.senderId !== 'string') return false;
        const users = (r.reactors ??= {})[c.emoji] ??= {};
        const had = users[c.senderId];
        if (had && had[0] >= c.seq) return false;
        users[c.senderId] = [c.seq, c.on !== false];
        return (had ? had[1] : false) !== (c.on !== false);
      }
      default:
        return false;
    }
  }

  #erase(r) {
    r.deleted = true;
    r.body = '';
    r.attachments = [];
    r.attachmentDetails = [];
    // what is left is the same whatever order its entries came in: no edit time, no reactions
    delete r.editedAt;
    delete r.reactors;
  }

  #view(r) {
    const { reactors, editSeq, deletedSeq, pageEditedAt, ...v } = r;
    const out = copy(v);
    if (!PLAIN.has(r.kind)) return out;
    const reactions = {};
    const mine = [];
    for (const [emoji, users] of Object.entries(reactors ?? {})) {
      let n = 0;
      for (const [user, [, on]] of Object.entries(users)) {
        if (!on) continue;
        n++;
        if (user === this.#me) mine.push(emoji);
      }
      if (n > 0) reactions[emoji] = n;
    }
    out.reactions = reactions;
    out.myReactions = mine;
    return out;
  }
}
