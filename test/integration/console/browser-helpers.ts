/**
 * Shared by the console's browser suites (browser.test.ts, recall-health.test.ts,
 * accessibility.test.ts, ...): headless Chromium (Debian's `chromium` package) driven by
 * playwright-core against the real local stack, users on the Auth emulator, sign-in, screenshots
 * and axe-core's checks.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { apiBaseUrl } from '../helpers/stack';
import { authHost, identity } from '../helpers/auth-emulator';

export { authHost };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** CONSOLE_SCREENSHOTS=<dir> saves the screenshots docs/screenshots/ holds. */
export const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

export interface TestUser {
  email: string;
  password: string;
  uid: string;
}

/** An email/password account on the Auth emulator (as scripts/lib/seed.mjs creates the demo logins). */
export async function createUser(email: string, password: string): Promise<string> {
  return (await identity('accounts:signUp', { email, password, returnSecureToken: true })).localId;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

/**
 * A page (in `context`, or a new desktop-sized one) whose console output goes to `log`, with a
 * line `csp: <url>` (or `no-csp: <url>`) for each console page it loads: whether the page came with
 * the console's Content-Security-Policy (firebase.json `hosting.headers`, docs/console.md#how-it-is-built).
 */
export async function newPage(browser: Browser, log: string[], context?: BrowserContext): Promise<Page> {
  const page = await (context ?? (await browser.newContext({ viewport: { width: 1280, height: 860 } }))).newPage();
  page.setDefaultTimeout(30_000);
  page.on('console', (m) => log.push(m.text()));
  page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.request().resourceType() !== 'document' || !new URL(r.url()).pathname.startsWith('/console/')) return;
    log.push(`${r.headers()['content-security-policy']?.includes("script-src 'self'") ? 'csp' : 'no-csp'}: ${r.url()}`);
  });
  return page;
}

/**
 * What a browser suite's pages say about the console's Content-Security-Policy: how many console
 * pages came with it and without it, and every violation Chromium reported (a script, style,
 * image, connection or frame the policy refused: the console would be broken where it happened).
 */
export function cspReport(log: readonly string[]): { pagesWithPolicy: number; pagesWithout: string[]; violations: string[] } {
  return {
    pagesWithPolicy: log.filter((l) => l.startsWith('csp: ')).length,
    pagesWithout: log.filter((l) => l.startsWith('no-csp: ')),
    violations: log.filter((l) => /Content Security Policy/i.test(l)),
  };
}

/** Fails unless every console page of the suite had the policy and nothing was refused by it. */
export function expectUnderCsp(log: readonly string[]): void {
  const report = cspReport(log);
  expect(report).toEqual({ pagesWithPolicy: report.pagesWithPolicy, pagesWithout: [], violations: [] });
  expect(report.pagesWithPolicy).toBeGreaterThan(0);
}

export async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  // A key shown once is masked: even a throwaway emulator key is not committed in an image.
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? false, mask: [page.locator('#new-key')], maskColor: '#c9d3cc' });
}

/** A screenshot of one element (e.g. a whole thread on a tall page, without the page's empty rest). */
export async function shotOf(element: Locator, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await element.screenshot({ path: join(SCREENSHOTS, `${name}.png`), mask: [element.page().locator('#new-key')], maskColor: '#c9d3cc' });
}

/**
 * Scrolls to what `locator` finds. The console re-renders a card or thread when its live data
 * changes (a server confirmation, a roll-up), which can replace the element between Playwright
 * finding it and scrolling to it ("Element is not attached to the DOM"); Playwright does not
 * retry that for scrolling, so this finds the element again, a bounded number of times.
 */
export async function scrollTo(locator: Locator, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await locator.scrollIntoViewIfNeeded();
      return;
    } catch (err) {
      if (attempt >= attempts || !/not attached to the DOM/.test(String(err))) throw err;
    }
  }
}

export const consoleUrl = (workspaceId: string, hash = ''): string => `${apiBaseUrl()}/console/?workspace=${encodeURIComponent(workspaceId)}${hash}`;

export async function signIn(page: Page, workspaceId: string, user: { email: string; password: string }): Promise<void> {
  await page.goto(consoleUrl(workspaceId));
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Records everything the page's live region (`#announcer`) says from the moment this is called; read with `announcements`. */
export async function recordAnnouncements(page: Page): Promise<void> {
  await page.evaluate(
    "window.__announced = []; new MutationObserver(() => window.__announced.push(document.getElementById('announcer').textContent)).observe(document.getElementById('announcer'), { childList: true, characterData: true, subtree: true })",
  );
}

/** What the live region said since `recordAnnouncements`. */
export const announcements = (page: Page): Promise<string[]> => page.evaluate<string[]>('window.__announced');

/** One axe-core violation, as expectNoAxeViolations reports it (the fields of axe's `Result` it lists). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/** axe-core's browser build (the version package.json pins), read once. */
let axeSource: string | undefined;

/**
 * What axe-core (every rule it runs by default: WCAG 2.x A/AA and its best practices) finds wrong
 * on the page as it is now. Its source goes in through `page.evaluate`, not `addScriptTag`: a
 * `<script>` with inline content is refused by the console's Content-Security-Policy
 * (`script-src 'self'`), and the suites count every refusal as a failure (expectUnderCsp), while
 * a DevTools evaluation is not subject to the page's policy. So axe runs on the page exactly as
 * served, policy included, with no `bypassCSP` context.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated in the page (strings: this file is type-checked without the DOM library).
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  return page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, helpUrl: v.helpUrl, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))",
  );
}

/**
 * Fails unless axe-core finds nothing on the page as it is now; the failure lists every violation
 * (rule id, impact, help and its page, the selector of each element). `label` names the view and
 * width in the message.
 */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  const violations = (await axeViolations(page)).map(
    (v) => `${v.id} (${v.impact ?? 'no impact'}): ${v.help} <${v.helpUrl}> at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
  );
  expect({ view: label, violations }).toEqual({ view: label, violations: [] });
}
