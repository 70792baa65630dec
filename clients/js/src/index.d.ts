// Type declarations of Waterline's JavaScript client (docs/PROTOCOL.md, §3, §4, §6, §9 and §10).

/** Where the client keeps cursors, recent messages and unsent sends. JSON values only. */
export interface Store {
  get(key: string): Promise<unknown | undefined>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  /** Every key that starts with prefix. */
  keys(prefix: string): Promise<string[]>;
}

/** The default: nothing survives the process or the page. */
export function memoryStore(): Store;
/** window.localStorage (or any Storage), keys under prefix (default "waterline:"). */
export function localStorageStore(options?: { storage?: Storage; prefix?: string }): Store;
/** An IndexedDB database (default name "waterline") with one object store. */
export function indexedDbStore(options?: { name?: string; indexedDB?: IDBFactory }): Store;

export type TokenProvider = (info: { reason: 'start' | 'reconnect' | 'expired'; userId: string | null }) => string | Promise<string>;

export interface ClientOptions {
  /** Base URLs of the server's nodes (http or https); tried in turn on reconnect. Default: location.origin in a browser. */
  urls?: string | string[];
  /** A JWT, or a function returning one: called again for every connection and after a 401, so it can refresh. */
  token: string | TokenProvider;
  /** Default memoryStore(). */
  store?: Store;
  /** A WebSocket constructor (default globalThis.WebSocket; Node 20 needs --experimental-websocket, or the ws package). */
  WebSocket?: unknown;
  /** A fetch function (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Reconnect backoff: full jitter over [0, min(max, initial * 2^attempt)). Defaults 250 ms and 10 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Backoff of a send answered overloaded / rate_limited / unavailable. Defaults 200 ms and 10 s. */
  sendRetryInitialMs?: number;
  sendRetryMaxMs?: number;
  /** A connection with no welcome by then is given up. Default 10 s. */
  connectTimeoutMs?: number;
  /** A send with no answer by then goes again with its correlationId. Default 30 s. */
  sendTimeoutMs?: number;
  /** Acks wait at most this long to be batched (default 20 ms), at most ackBatch ids a frame (default 256). */
  ackDelayMs?: number;
  ackBatch?: number;
  /** How long a message past a gap waits for the missing ones before history is read. Default 500 ms. */
  gapWaitMs?: number;
  /** History page size, 1-1000. Default 500. */
  pageSize?: number;
  /** Messages kept (and stored) per chat for messages(). Default 200. */
  keepMessages?: number;
  /** A chat's cursor and messages are written at most this often. Default 250 ms. */
  persistDelayMs?: number;
  /** Default true: a chat's sends go one at a time, so they commit in the order they were made. */
  ordered?: boolean;
  /** Which chats to resync on connect: 'all' of the caller's (listed on every connect; default) or these ids. */
  chats?: 'all' | string[];
  /** Default false: after 4009 (another tab or device took the session) the client stays down until reconnect(). */
  reconnectOnSupersede?: boolean;
}

export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'superseded' | 'closed';

/** An attachment as upload() answers it and as a message's attachmentDetails list it. */
export interface AttachmentDetail {
  attachmentId: string;
  contentType: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  name?: string | null;
}

/** The kinds of entries a chat's log holds (§9); a newer server may add others. */
export type EntryKind = 'text' | 'stream' | 'edit' | 'delete' | 'reaction' | 'member' | (string & {});

/**
 * One entry of a chat's log as it arrives (a live frame, a history page, an own accepted
 * operation). The kind says which of the optional fields it carries.
 */
export interface Entry {
  messageId: string;
  correlationId?: string;
  chatId: string;
  seq: number;
  senderId: string;
  /** text: the text; edit: the new text ("" once the target is deleted); "" for delete and reaction. */
  body: string;
  sentAt: string;
  kind: EntryKind;
  /** stream: the stream. */
  streamId?: string;
  /** text: the message of the same chat it answers. */
  replyTo?: string;
  /** text: attachmentIds, with their details. */
  attachments?: string[];
  attachmentDetails?: AttachmentDetail[];
  /** edit, delete, reaction: the message it changes. */
  targetId?: string;
  /** reaction: the emoji, and whether it was put on (true) or taken back (false). */
  emoji?: string;
  on?: boolean;
  /** member (§11). */
  member?: { userId: string; change: string; role?: string; by?: string };
  /** A history page's current state of a text entry (§9). */
  editedAt?: string;
  deleted?: boolean;
  reactions?: Record<string, number>;
  myReactions?: string[];
}

/**
 * A message (kind text or stream) in its current state: the last edit's body and time, deleted
 * (body "" and no attachments), and the reactions counted from the reaction entries. Entries of
 * a kind this client does not know are held as they came.
 */
export interface Message extends Entry {
  /** Present once edited: the last edit's time. */
  editedAt?: string;
  /** True once deleted: body is "", attachments empty. */
  deleted?: boolean;
  /** Emoji to the number of members whose reaction with it is on (text and stream messages; {} when none). */
  reactions?: Record<string, number>;
  /** The emoji of the reader's own reactions that are on. */
  myReactions?: string[];
}

/** What a change entry did: the message it changed, in its new state. */
export interface MessageUpdate {
  chatId: string;
  messageId: string;
  change: 'edit' | 'delete' | 'reaction';
  message: Message;
  /** The entry that changed it. */
  entry: Entry;
}

/**
 * A chat's messages in their current state, fed with its entries in any order, each applied
 * once (the client keeps one per chat; usable on its own, e.g. over history pages).
 */
export class ChatLog {
  constructor(options?: { me?: string | null; keep?: number; records?: unknown[] });
  /** The reader, for myReactions. */
  me: string | null;
  /** Messages (and entries of unknown kinds) held. */
  readonly size: number;
  /** Applies one entry: entry is null for a duplicate; updated lists the messages it changed. */
  apply(entry: Entry): { entry: Entry | Message | null; updated: Message[] };
  get(messageId: string): Message | undefined;
  /** Ascending seq: messages and entries of unknown kinds (never edit, delete or reaction entries). */
  messages(): Message[];
  /** Plain JSON to keep; new ChatLog({ records }) takes it back. */
  toJSON(): unknown[];
}

/** True for the kinds that change another entry: edit, delete, reaction. */
export function isChange(kind: string): boolean;

export interface Accepted {
  correlationId: string;
  messageId: string;
  chatId: string;
  seq: number;
  sentAt: string;
  /** A reaction that changed nothing: messageId and seq are its target's, and no entry was made. */
  unchanged?: true;
}

/** What an own operation is: send (a message), edit, delete or react. */
export type Operation = 'send' | 'edit' | 'delete' | 'react';

export interface PendingSend {
  correlationId: string;
  chatId: string;
  op: Operation;
  /** send and edit: the text; "" otherwise. */
  body: string;
  createdAt: string;
  state: 'saving' | 'queued' | 'inflight' | 'retry';
  attempts: number;
  /** edit, delete, react: the target. */
  messageId?: string;
  emoji?: string;
  on?: boolean;
  replyTo?: string;
  attachments?: string[];
  attachmentDetails?: AttachmentDetail[];
}

/** A chat's last text or stream entry in its current state (PROTOCOL.md §10). */
export interface LastMessage {
  messageId: string;
  seq: number;
  senderId: string;
  kind: string;
  /** Its latest text, cut to 200 characters; "" once deleted. */
  body: string;
  sentAt: string;
  /** Present once it was edited. */
  editedAt?: string;
  deleted: boolean;
}

export interface Chat {
  chatId: string;
  title: string | null;
  members: string[];
  lastSeq?: number;
  /** Others' text and stream entries past the caller's read position, deleted ones not counted (§10). */
  unread?: number;
  lastMessage?: LastMessage | null;
  readSeq?: Record<string, number>;
}

export interface ChatView {
  chatId: string;
  title: string | null;
  members: string[];
  /** The cursor: highest seq handed to the application with none missing below. */
  seq: number;
  readSeq: Record<string, number>;
  /**
   * Others' text and stream entries past this user's read position: the server's count when the
   * chat was last listed or read, kept live as entries arrive, as markRead moves and as one's own
   * messages are sent (sending is reading). 0 until the server has said.
   */
  unread: number;
  /** The last text or stream entry, kept live through new messages, edits and deletes; null when none is known. */
  lastMessage: LastMessage | null;
}

export interface Chunk {
  streamId: string;
  seq: number;
  data?: string;
  blobId?: string;
  size?: number;
  contentType?: string;
  at?: string;
}

export interface StreamState {
  streamId: string;
  state: 'open' | 'complete' | 'aborted';
  lastSeq: number;
}

export interface StreamSubscription {
  readonly streamId: string;
  readonly transport: 'ws' | 'sse';
  /** The next chunk seq expected (a resume starts here). */
  readonly nextSeq: number;
  readonly state: StreamState['state'] | null;
  readonly lastSeq: number | null;
  /** Resolves when every chunk of a complete or aborted stream has been seen, or on close(); rejects on not_found / forbidden. */
  readonly done: Promise<{ streamId: string; state: string | null; lastSeq: number | null; closed?: boolean }>;
  close(): void;
}

export interface ClientEvents {
  /**
   * Every entry of every known chat, own ones included, once each, in seq order per chat: a
   * message in its current state, or an edit, delete or reaction entry (also applied, see update).
   */
  message: Message;
  /** A message held changed: an edit, a delete, or a reaction put on or taken back. */
  update: MessageUpdate;
  /** An own operation committed (the body is the one sent; targetId the message an edit, delete or react changed). */
  accepted: Accepted & { op: Operation; body: string; targetId?: string };
  /**
   * An own send refused for good: invalid, too_large, not_found or forbidden; an error code this
   * client does not know, after 5 tries; too_large also when the frame is over the welcome's
   * maxFrameBytes, or the connection closed with 1009 twice with it unanswered.
   */
  failed: { correlationId: string; chatId: string; op: Operation; body: string; code: string; message: string; messageId?: string; emoji?: string };
  /** A send answered overloaded / rate_limited / unavailable, tried again after delayMs. */
  retry: { correlationId: string; chatId: string; code: string; delayMs: number };
  /** Another member's read receipt. */
  read: { chatId: string; userId: string; seq: number };
  /** Another member started typing (typing: true), or stopped: 5 s without a typing frame, or a message from them. */
  typing: { chatId: string; userId: string; typing: boolean };
  /** Every presence frame (a user who shares a chat with this one came online or went offline), and a getPresence() answer that changed what was known. */
  presence: PresenceChange;
  stream: StreamState;
  chunk: Chunk;
  state: { state: ConnectionState; previous: ConnectionState; code?: number; reason?: string; delayMs?: number; url?: string; attempt?: number; sessionId?: string };
  /** A chat became known. */
  chat: ChatView;
  /** A chat's history read ended: everything up to seq has been handed over. */
  synced: { chatId: string; seq: number };
  /** Every chat's resync after a (re)connect ended. */
  caughtUp: { chats: number };
  /** History before toSeq is no longer kept by the server (retention): fromSeq..toSeq will never come. */
  gap: { chatId: string; fromSeq: number; toSeq: number };
  /** Something went wrong that the client could not handle by retrying: never thrown, always said here. */
  error: { source: string; error?: unknown; code?: string; message?: string; chatId?: string; streamId?: string; frame?: unknown };
  /** A frame of a type this client does not know (a newer server). */
  frame: Record<string, unknown>;
}

export class WaterlineError extends Error {
  code: string;
  status?: number;
  correlationId?: string;
  chatId?: string;
  streamId?: string;
}

export const RETRIABLE: readonly ['overloaded', 'rate_limited', 'unavailable'];

export class WaterlineClient {
  constructor(options: ClientOptions);
  readonly state: ConnectionState;
  readonly userId: string | null;
  /** The limits of the last welcome. */
  readonly limits: Record<string, number>;
  readonly url: string;
  on<K extends keyof ClientEvents>(type: K, listener: (event: ClientEvents[K]) => void): () => void;
  off<K extends keyof ClientEvents>(type: K, listener: (event: ClientEvents[K]) => void): void;
  /** Loads the store and starts connecting (resolves when loaded, not when connected). */
  start(): Promise<void>;
  close(): Promise<void>;
  /** After 'superseded': connect again (taking the session back). */
  reconnect(): void;
  /** Posts a message: replyTo answers a message of the chat; attachments are upload()'s ids (the body may then be ""). */
  send(chatId: string, body: string, options?: { correlationId?: string; replyTo?: string; attachments?: string[] }): Promise<Accepted>;
  /** Replaces an own message's text (forbidden for others' messages). */
  edit(chatId: string, messageId: string, body: string, options?: { correlationId?: string }): Promise<Accepted>;
  /** Deletes a message (its sender, or a chat admin); a second delete answers the first. */
  delete(chatId: string, messageId: string, options?: { correlationId?: string }): Promise<Accepted>;
  /** The same as delete(). */
  deleteMessage(chatId: string, messageId: string, options?: { correlationId?: string }): Promise<Accepted>;
  /** Puts a reaction on (default) or takes it back; unchanged: true when it changed nothing. */
  react(chatId: string, messageId: string, emoji: string, on?: boolean, options?: { correlationId?: string }): Promise<Accepted>;
  /** Uploads a file to the chat, to be named in a send's attachments. */
  upload(chatId: string, data: Blob | ArrayBuffer | ArrayBufferView | string, options?: { name?: string; contentType?: string; timeoutMs?: number }): Promise<AttachmentDetail>;
  /** An attachment's bytes, fetched with the token. */
  download(attachmentId: string, options?: { timeoutMs?: number }): Promise<Blob>;
  /** The URL of an attachment's bytes (it needs the token: in a header, or with withToken in the query where the server takes it). */
  attachmentUrl(attachmentId: string, options?: { withToken?: boolean }): string;
  /** One message in its current state, from the server. */
  getMessage(chatId: string, messageId: string): Promise<Entry>;
  pending(chatId?: string): PendingSend[];
  markRead(chatId: string, seq: number): void;
  /** The user is typing: call on every keystroke; a frame goes out at most every 3 s per chat, only while connected (true when one did). */
  typing(chatId: string): boolean;
  /** Who is typing in the chat now. */
  typists(chatId: string): string[];
  /** What was last learned of a user's presence (a presence frame or getPresence()); undefined when nothing was. */
  presenceOf(userId: string): Presence | undefined;
  /** Asks the server (a user who shares a chat with this one, or this user; else not_found); updates presenceOf(). */
  getPresence(userId: string): Promise<Presence>;
  /** This user's settings. */
  getSettings(): Promise<Settings>;
  /** Hides this user's presence (true: offline without lastSeen to everyone else) or shows it again (false). */
  setPresenceHidden(hidden: boolean): Promise<Settings>;
  readSeq(chatId: string): Record<string, number>;
  chats(): ChatView[];
  /** The chat's held messages in their current state, ascending seq (entries of unknown kinds among them). */
  messages(chatId: string): Message[];
  /** One held message in its current state. */
  message(chatId: string, messageId: string): Message | undefined;
  cursor(chatId: string): number;
  createChat(members: string[], title?: string): Promise<Chat>;
  addMember(chatId: string, userId: string): Promise<Chat>;
  getChat(chatId: string): Promise<Chat & { readSeq: Record<string, number> }>;
  listChats(): Promise<Chat[]>;
  /** Searches the caller's chats, newest first (PROTOCOL.md §10); pass a page's next as before for the page below. */
  search(q: string, options?: { chatId?: string; limit?: number; before?: string }): Promise<SearchPage>;
  subscribe(streamId: string, options?: { fromSeq?: number; transport?: 'auto' | 'ws' | 'sse' }): StreamSubscription;
  /** An authenticated JSON call on the server in use. */
  rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  stats(): {
    connects: number; welcomes: number; pings: number; delivered: number; duplicates: number; acked: number; ackFrames: number; acksQueued: number;
    sent: number; resent: number; retried: number; historyPages: number; pending: number; inflight: number;
  };
}

/** The sub claim of a compact JWT (unverified). */
export function tokenSubject(token: string): string;
/** POST /api/dev/tokens (zero-configuration mode only). */
export function devToken(baseUrl: string, userId: string, options?: { fetch?: typeof fetch }): Promise<string>;
export function fullJitter(attempt: number, baseMs: number, capMs: number, random?: () => number): number;
export function readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id: string | null; event: string; data: string }>;

/** One search result (PROTOCOL.md §10). */
export interface SearchResult {
  chatId: string;
  messageId: string;
  seq: number;
  senderId: string;
  sentAt: string;
  /** Plain text around the matches, never markup. */
  snippet: string;
  /** The matched ranges of snippet, [start, end) in UTF-16 code units. */
  highlights: Array<[number, number]>;
}

/** A page of search results, newest first; next is the cursor of the page below, null on the last. */
export interface SearchPage {
  results: SearchResult[];
  next: string | null;
}

/** A user's presence (PROTOCOL.md §10). */
export type PresenceState = 'online' | 'offline';

/** A presence frame as the presence event gives it. */
export interface PresenceChange {
  userId: string;
  state: PresenceState;
  /** ISO-8601 instant the user was last seen; null when online, when they hide their presence, or when not known. */
  lastSeen: string | null;
}

/** What presenceOf() and getPresence() give. */
export interface Presence extends PresenceChange {
  /** Only in one's own presence (asked with getPresence): whether one hides it. */
  hidden?: boolean;
}

/** This user's settings (GET and PUT /api/me/settings). */
export interface Settings {
  presence: 'visible' | 'hidden';
}
