import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); the tests never download a browser. */
export const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Messages the page logged as errors, and uncaught exceptions. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * Chromium with a fresh profile in a temporary user-data-dir, one context and one page. Fails with a
 * clear message when the browser is missing (.ci/run installs it).
 */
export async function launchBrowser(options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium), as .ci/run does.`);
  const profile = mkdtempSync(path.join(tmpdir(), 'cairn-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
  });
  context.setDefaultTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
  page.on('console', (msg) => {
    // Failed API calls the test provokes (a bad rule, a bad filter) are logged by the browser itself.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The controls of the page that a screen reader could not name: inputs without a label, buttons
 * without text or aria-label. Returns a description of each, empty when every control is named.
 */
export async function unnamedControls(page: Page): Promise<string[]> {
  // Passed as text: functions compiled by tsx carry helpers (`__name`) the page does not have.
  return page.evaluate(UNNAMED_CONTROLS) as Promise<string[]>;
}

const UNNAMED_CONTROLS = `(() => {
  const out = [];
  for (const el of document.querySelectorAll('input, select, textarea, button, a[href]')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0 && !el.classList.contains('sr-only')) continue;
    const labelled = (el.labels && [...el.labels].some((l) => l.textContent.trim() !== '')) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    const text = (el.textContent || '').trim();
    const named = el.tagName === 'BUTTON' || el.tagName === 'A' ? labelled || text !== '' : labelled;
    if (!named) out.push(el.outerHTML.slice(0, 120));
  }
  return out;
})()`;
