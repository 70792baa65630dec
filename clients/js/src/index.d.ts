// Type declarations of Waterline's JavaScript client (docs/PROTOCOL.md, §3, §4 and §6).

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

export interface Message {
  messageId: string;
  correlationId: string;
  chatId: string;
  seq: number;
  senderId: string;
  body: string;
  sentAt: string;
  /** "text", or "stream" (then streamId names it). */
  kind: string;
  streamId?: string;
}

export interface Accepted {
  correlationId: string;
  messageId: string;
  chatId: string;
  seq: number;
  sentAt: string;
}

export interface PendingSend {
  correlationId: string;
  chatId: string;
  body: string;
  createdAt: string;
  state: 'saving' | 'queued' | 'inflight' | 'retry';
  attempts: number;
}

export interface Chat {
  chatId: string;
  title: string | null;
  members: string[];
  lastSeq?: number;
  readSeq?: Record<string, number>;
}

export interface ChatView {
  chatId: string;
  title: string | null;
  members: string[];
  /** The cursor: highest seq handed to the application with none missing below. */
  seq: number;
  readSeq: Record<string, number>;
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
  /** Every message of every known chat, own sends included, once each, in seq order per chat. */
  message: Message;
  /** An own send committed (the body is the one sent). */
  accepted: Accepted & { body: string };
  /**
   * An own send refused for good: invalid, too_large, not_found or forbidden; an error code this
   * client does not know, after 5 tries; too_large also when the frame is over the welcome's
   * maxFrameBytes, or the connection closed with 1009 twice with it unanswered.
   */
  failed: { correlationId: string; chatId: string; body: string; code: string; message: string };
  /** A send answered overloaded / rate_limited / unavailable, tried again after delayMs. */
  retry: { correlationId: string; chatId: string; code: string; delayMs: number };
  /** Another member's read receipt. */
  read: { chatId: string; userId: string; seq: number };
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
  send(chatId: string, body: string, options?: { correlationId?: string }): Promise<Accepted>;
  pending(chatId?: string): PendingSend[];
  markRead(chatId: string, seq: number): void;
  readSeq(chatId: string): Record<string, number>;
  chats(): ChatView[];
  messages(chatId: string): Message[];
  cursor(chatId: string): number;
  createChat(members: string[], title?: string): Promise<Chat>;
  addMember(chatId: string, userId: string): Promise<Chat>;
  getChat(chatId: string): Promise<Chat & { readSeq: Record<string, number> }>;
  listChats(): Promise<Chat[]>;
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
