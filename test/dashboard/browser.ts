import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
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
    // No sliding menu or spinner mid-way when a test looks at the page.
    reducedMotion: 'reduce',
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

/** The width and theme a page is looked at in. */
export interface View {
  width: number;
  height: number;
  theme: 'light' | 'dark';
}

export async function setView(page: Page, view: View): Promise<void> {
  await page.setViewportSize({ width: view.width, height: view.height });
  await page.emulateMedia({ colorScheme: view.theme });
}

/**
 * What makes the page wider than the window (the document must not scroll sideways; a table may
 * scroll inside its own box): empty when it fits, else the width and the outermost elements that
 * stick out.
 */
export async function sidewaysOverflow(page: Page): Promise<string | undefined> {
  return (await page.evaluate(OVERFLOW)) as string | undefined;
}

const OVERFLOW = `(() => {
  const root = document.documentElement;
  if (root.scrollWidth <= window.innerWidth) return undefined;
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.getBoundingClientRect().right <= window.innerWidth + 0.5) continue;
    // An absolutely placed element is clipped by the boxes from its containing block up, not below it.
    const position = getComputedStyle(el).position;
    let clipped = false;
    const from = position === 'fixed' ? null : position === 'absolute' ? el.offsetParent : el.parentElement;
    for (let p = from; p && p !== document.body; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (style.overflowX !== 'visible' || p.getBoundingClientRect().right > window.innerWidth + 0.5) { clipped = true; break; }
    }
    if (!clipped) out.push(el.outerHTML.slice(0, 140));
    if (out.length === 3) break;
  }
  return 'the page is ' + root.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window; sticking out: ' + out.join(' | ');
})()`;

/** Open dialogs that do not fit in the window. */
export async function dialogsOffScreen(page: Page): Promise<string[]> {
  return (await page.evaluate(`[...document.querySelectorAll('dialog[open]')].flatMap((d) => {
    const r = d.getBoundingClientRect();
    const fits = r.left >= -0.5 && r.top >= -0.5 && r.right <= window.innerWidth + 0.5 && r.bottom <= window.innerHeight + 0.5;
    return fits ? [] : ['dialog "' + (d.getAttribute('aria-labelledby') ? document.getElementById(d.getAttribute('aria-labelledby')).textContent : '') + '" spans ' + Math.round(r.left) + ',' + Math.round(r.top) + ' to ' + Math.round(r.right) + ',' + Math.round(r.bottom) + ' in a ' + window.innerWidth + 'x' + window.innerHeight + ' window'];
  })`)) as string[];
}

// axe-core from node_modules, put into the page by the test (the console's CSP allows no other
// script, and evaluation by the browser's protocol is not subject to it); no CDN is involved.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The accessibility problems axe-core finds in the page as it is now, of impact serious or critical:
 * one line per element, naming the rule, the element (selector and HTML) and what to fix.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(' '), html: n.html.slice(0, 160), summary: n.failureSummary })),
  })))`)) as Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string; html: string; summary: string }> }>;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}: ${v.help}) at ${n.target} ${n.html} — ${n.summary.replace(/\s+/g, ' ')}`));
}
