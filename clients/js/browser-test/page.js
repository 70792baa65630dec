// What the demo page's browser tests share: people signed in, each in a browser context of their
// own, page problems collected (an uncaught error or a Content-Security-Policy refusal fails the
// test whatever it checks), and the page's parts found the way a person would find them.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Screenshots of each step go here. */
export const SHOTS = join(REPO, 'target', 'browser-screenshots');

export class DemoPages {
  #browser;
  #base;
  #contexts = [];
  #problems = [];

  constructor(browser, base) {
    this.#browser = browser;
    this.#base = base;
    mkdirSync(SHOTS, { recursive: true });
  }

  /** Closes every context of the test and forgets its problems. */
  async reset() {
    const open = this.#contexts;
    this.#contexts = [];
    await Promise.all(open.map((c) => c.close()));
    this.#problems = [];
  }

  /** Uncaught errors and Content-Security-Policy refusals are failures of the page whatever the test. */
  watch(page, who) {
    page.on('pageerror', (e) => this.#problems.push(`${who}: uncaught ${e.message}`));
    page.on('console', (m) => {
      if (/content security policy|refused to/i.test(m.text())) this.#problems.push(`${who}: ${m.text()}`);
    });
    return page;
  }

  assertNoProblems() {
    assert.deepEqual(this.#problems, [], 'the pages reported errors');
  }

  async newContext(options = {}) {
    const ctx = await this.#browser.newContext({ viewport: { width: 1100, height: 720 }, ...options });
    this.#contexts.push(ctx);
    return ctx;
  }

  /** A person in a browser of their own (own localStorage), signed in. */
  async person(name, options) {
    const ctx = await this.newContext(options);
    const page = this.watch(await ctx.newPage(), name);
    await page.goto(`${this.#base}/`);
    await page.getByLabel('Your name').fill(name);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await connection(page, 'open');
    assert.equal(await page.getByTestId('me').textContent(), name);
    return { name, ctx, page };
  }
}

export function connection(page, state, timeout = 30_000) {
  return page.locator(`[data-testid="connection"][data-state="${state}"]`).waitFor({ timeout });
}

export function shot(page, name) {
  return page.screenshot({ path: join(SHOTS, name) });
}

export async function createChat(page, members, title) {
  await page.getByLabel('Members').fill(members);
  await page.getByLabel('Title (optional)').fill(title);
  await page.getByRole('button', { name: 'Create chat' }).click();
  await page.locator('#chat-title', { hasText: title }).waitFor();
}

export async function openChat(page, title) {
  await page.getByTestId('chat-item').filter({ hasText: title }).click();
  await page.locator('#chat-title', { hasText: title }).waitFor();
}

export async function send(page, body) {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(body);
  await box.press('Enter');
}

export const exactly = (text) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

/** The message bubbles (zero, one or more) whose body is exactly this text. */
export function message(page, body) {
  return page.getByTestId('message').filter({ has: page.getByTestId('message-body').filter({ hasText: exactly(body) }) });
}

export function inState(page, locator, ...states) {
  return locator.and(page.locator(states.map((s) => `[data-state="${s}"]`).join(', ')));
}

/** What the log shows, top to bottom. */
export function logOf(page) {
  return page.getByTestId('message').evaluateAll((els) => els.map((e) => ({
    seq: e.dataset.seq ? Number(e.dataset.seq) : null,
    messageId: e.dataset.messageId ?? null,
    state: e.dataset.state ?? null,
    kind: e.dataset.kind,
    body: e.querySelector('[data-testid="message-body"]')?.textContent ?? null,
  })));
}

/** Accepted messages in strictly rising seq order, each once; sends on their way only below them. */
export function assertConsistent(log, who) {
  const accepted = log.filter((m) => m.seq != null);
  const firstUnsent = log.findIndex((m) => m.seq == null && m.state !== 'failed');
  if (firstUnsent >= 0) assert.ok(log.slice(firstUnsent).every((m) => m.seq == null), `${who}: an unsent message above an accepted one`);
  for (let i = 1; i < accepted.length; i++) assert.ok(accepted[i].seq > accepted[i - 1].seq, `${who}: seq ${accepted[i].seq} after ${accepted[i - 1].seq}`);
  assert.equal(new Set(accepted.map((m) => m.messageId)).size, accepted.length, `${who}: a message shown twice`);
}

export const bodies = (log) => log.filter((m) => m.kind === 'text').map((m) => m.body);

/**
 * A suite's shared set-up: the packaged server, one browser and its pages, each test's contexts
 * closed after it. Returns an object whose server, browser and pages are set once the suite starts.
 */
export function demoSuite({ before, after, afterEach }, launch, TestServer) {
  const suite = {};
  before(async () => {
    suite.server = await TestServer.start();
    suite.browser = await launch();
    suite.pages = new DemoPages(suite.browser, suite.server.base);
  });
  after(async () => {
    await suite.browser?.close();
    await suite.server?.dispose();
  });
  afterEach(() => suite.pages.reset());
  return suite;
}
