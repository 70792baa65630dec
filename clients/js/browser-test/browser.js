// What every browser test needs: playwright-core and Debian's Chromium, or a failed test that
// names the setup script (or, with WATERLINE_SKIP_BROWSER=1, a skip that says so).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SETUP = 'clients/js/scripts/setup-browser.sh';

/** The `skip` option for a suite: false to run, else the reason shown. */
export const SKIP = process.env.WATERLINE_SKIP_BROWSER === '1' ? 'WATERLINE_SKIP_BROWSER=1: the browser tests are not run' : false;

export let playwright = null;
let missing = null;
if (!SKIP) {
  try {
    playwright = await import('playwright-core');
  } catch (error) {
    missing = `playwright-core cannot be loaded (${error.message}): run ${SETUP}`;
  }
  if (!existsSync(CHROMIUM)) missing = `no Chromium at ${CHROMIUM}: run ${SETUP} (or point CHROMIUM at a Chromium binary)`;
}

/** Registers a failing test when something is missing; returns the suite's skip option. */
export function requireBrowser(what) {
  if (missing) test(`${what} have Chromium and playwright-core`, () => assert.fail(missing));
  return SKIP || (missing ? 'see the failed setup test above' : false);
}

/** Chromium as this machine needs it: no sandbox as root, and no outside network in the background. */
export function launch() {
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}
