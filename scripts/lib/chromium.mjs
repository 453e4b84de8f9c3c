/**
 * The Chromium the console's browser suites drive (test/integration/console/browser-helpers.ts):
 * Debian's `chromium` package through playwright-core, and the one browser the parallel lane of
 * `npm test` shares (scripts/test-stack.mjs).
 *
 * Shared because a launch costs about 1.5 CPU-s (the browser, GPU, zygote and utility processes
 * starting), and the eight browser suites each launched their own; every suite still gets its own
 * browser contexts (cookies, storage, permissions), and its `browser.close()` on a connected
 * browser closes those contexts and disconnects, leaving the browser to the others.
 */
import { existsSync } from 'node:fs';

/** Where the browser is: CHROMIUM_PATH, else Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** How every browser of the suites is launched (headless; no sandbox: CI runs as root). */
export const CHROMIUM_LAUNCH_OPTIONS = Object.freeze({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });

/** The variable that gives the suites the shared browser's endpoint (`chromium.connect`). */
export const SHARED_BROWSER_ENV = 'TEST_BROWSER_WS_ENDPOINT';

/** Whether a suite's source drives a browser (it launches one through browser-helpers.ts). */
export const drivesBrowser = (source) => source.includes('launchChromium(');

/**
 * Starts the shared browser (a Playwright browser server) when Chromium is there; `null` when it
 * is not (each suite then fails with launchChromium's own message, which says how to install it).
 */
export async function startSharedBrowser() {
  if (!existsSync(CHROMIUM_PATH)) return null;
  const { chromium } = await import('playwright-core');
  return chromium.launchServer({ ...CHROMIUM_LAUNCH_OPTIONS, args: [...CHROMIUM_LAUNCH_OPTIONS.args] });
}
