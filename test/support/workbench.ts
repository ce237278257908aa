// Playwright helpers for driving VS Code's workbench in headless Chromium, and the
// start-up every e2e suite shares: the VSIX installed into a fresh code-server, one page.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserServer, type Frame, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { CodeServer, codeServerBin, installExtension, writeUserSettings, type CodeServerDirs } from './code-server';

const root = path.resolve(__dirname, '..', '..');

/**
 * How long the suites wait for the workbench to show something: 90 s, or
 * DDBENCH_E2E_UI_TIMEOUT_MS on a machine so loaded that a page takes longer to load.
 * A bound on waiting for a state, never a measure of speed.
 */
export const UI_TIMEOUT = Number(process.env.DDBENCH_E2E_UI_TIMEOUT_MS ?? '') || 90_000;

/** The window size of the README's screenshots. */
const DOC_SCREEN = { width: 1280, height: 800 };

/**
 * Where the README's screenshots are written besides the artifacts, when set:
 * DDBENCH_SCREENSHOTS=docs/images (relative to the repository).
 */
const docsImages = process.env.DDBENCH_SCREENSHOTS ? path.resolve(root, process.env.DDBENCH_SCREENSHOTS) : undefined;

export function chromiumPath(): string {
  return process.env.DDBENCH_CHROMIUM ?? '/usr/bin/chromium';
}

/** Chromium run headless as root with no GPU and no internet: no sandbox, no GPU, and nothing that phones home. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface HeadlessBrowser {
  browser: Browser;
  /** Kept so the browser process can be killed even when close() hangs. */
  server: BrowserServer;
}

export async function launchBrowser(): Promise<HeadlessBrowser> {
  if (!fs.existsSync(chromiumPath())) throw new Error(`no Chromium at ${chromiumPath()}`);
  const server = await chromium.launchServer({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  try {
    return { server, browser: await chromium.connect(server.wsEndpoint()) };
  } catch (err) {
    await server.kill();
    throw err;
  }
}

export async function closeBrowser(b: HeadlessBrowser): Promise<void> {
  await withTimeout(b.browser.close(), 10_000).catch(() => undefined);
  await b.server.kill();
}

/** code-server and Chromium, when either is not installed; the suites skip themselves then. */
export function missingE2eTools(): string[] {
  return [codeServerBin(), chromiumPath()].filter((p) => !fs.existsSync(p));
}

/**
 * A suite's start: skips it (saying why) when the e2e tools are not installed, empties
 * its artifacts folder, and makes its temporary folder, which it returns.
 */
export function prepareSuite(ctx: Mocha.Context, artifacts: string, tmpPrefix: string): string {
  const missing = missingE2eTools();
  if (missing.length > 0) {
    console.log(`      skipped: ${missing.join(' and ')} not installed; run \`npm run setup:e2e\` first`);
    ctx.skip();
  }
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  return fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
}

/**
 * Packages the extension as a user would install it, into `dir` so concurrent suites
 * do not share one VSIX file (DDBENCH_E2E_VSIX uses a prebuilt one).
 */
export function buildVsix(dir: string): string {
  if (process.env.DDBENCH_E2E_VSIX) return path.resolve(process.env.DDBENCH_E2E_VSIX);
  const out = path.join(dir, 'ddbench.vsix');
  for (const [cmd, args] of [
    ['npm', ['run', 'build']],
    ['npx', ['vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', out]],
  ] as const) {
    const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
  }
  return out;
}

export interface WorkbenchOptions {
  /** A throwaway folder of the suite's: the VSIX, extensions and user data go in it. */
  tmp: string;
  /** Screenshots and the code-server log. */
  artifacts: string;
  /** User settings beside the ones every suite needs (see writeUserSettings). */
  settings: Record<string, unknown>;
  /** The folder the window opens, if any. */
  folder?: string;
  viewport: { width: number; height: number };
  /** Runs on the installed extension's folder before code-server starts (what the VSIX must ship). */
  checkInstalled?: (installedDir: string) => void;
}

/** One code-server window with the VSIX installed, in headless Chromium. */
export class Workbench {
  private shots = 0;

  private constructor(
    readonly dirs: CodeServerDirs,
    readonly server: CodeServer,
    private readonly headless: HeadlessBrowser,
    readonly page: Page,
    private readonly artifacts: string,
  ) {}

  /** Installs the VSIX, starts code-server and opens its page; whatever started is stopped again if a later step fails. */
  static async start(opts: WorkbenchOptions): Promise<Workbench> {
    const dirs: CodeServerDirs = { extensionsDir: path.join(opts.tmp, 'extensions'), userDataDir: path.join(opts.tmp, 'user-data') };
    writeUserSettings(dirs, opts.settings);
    installExtension(dirs, buildVsix(opts.tmp));
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
    opts.checkInstalled?.(path.join(dirs.extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`));
    const server = await CodeServer.start(dirs, path.join(opts.artifacts, 'code-server.log'), opts.folder);
    let headless: HeadlessBrowser | undefined;
    try {
      headless = await launchBrowser();
      const page = await headless.browser.newPage({ viewport: opts.viewport });
      page.setDefaultTimeout(UI_TIMEOUT);
      await page.goto(server.url, { timeout: UI_TIMEOUT, waitUntil: 'domcontentloaded' });
      await waitForWorkbench(page);
      return new Workbench(dirs, server, headless, page, opts.artifacts);
    } catch (err) {
      if (headless) await closeBrowser(headless);
      await server.stop();
      throw err;
    }
  }

  /** A numbered screenshot in the artifacts folder; never fails the test. */
  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(this.artifacts, `${String(++this.shots).padStart(2, '0')}-${name}.png`) }).catch(() => undefined);
  }

  /**
   * A screenshot the README shows, taken with the window at 1280x800: in the
   * artifacts like any other, and as `<name>.png` in DDBENCH_SCREENSHOTS when that is
   * set. With `maximized`, the active editor group fills the editor area (there are two groups) for the
   * picture; `settle` waits for what the new size changes (a webview's redraw).
   * The window is restored after.
   */
  async docScreenshot(name: string, opts: { maximized?: boolean; settle?: () => Promise<unknown> } = {}): Promise<void> {
    const size = this.page.viewportSize();
    // Toasts (a reproducer's verdict, say) would cover part of the picture.
    await runCommand(this.page, 'Notifications: Clear All Notifications');
    if (opts.maximized) await runCommand(this.page, 'View: Toggle Maximize Editor Group');
    await this.page.setViewportSize(DOC_SCREEN);
    // The pointer on the empty title bar, between the command centre and the layout buttons (a hover would cover the picture).
    await this.page.mouse.move(1040, 16);
    await nextFrames(this.page);
    await opts.settle?.();
    await this.screenshot(name);
    if (docsImages !== undefined) {
      fs.mkdirSync(docsImages, { recursive: true });
      await this.page.screenshot({ path: path.join(docsImages, `${name}.png`) });
    }
    if (size !== null) await this.page.setViewportSize(size);
    if (opts.maximized) await runCommand(this.page, 'View: Toggle Maximize Editor Group');
    await nextFrames(this.page);
  }

  async close(): Promise<void> {
    await closeBrowser(this.headless);
    await this.server.stop();
  }
}

/**
 * The page of the DDBench webview on screen (VS Code nests it in two iframes; other
 * extensions' webviews, the ISSUE.md preview say, can be on screen beside it).
 */
export function ddbenchWebview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview[src*="extensionId=ddbench.ddbench"]').frameLocator('iframe#active-frame');
}

/** The frame of the webview page that has `selector`, once there is one. */
export async function webviewFrame(page: Page, what: string, selector: string): Promise<Frame> {
  const found = await waitUntil(
    what,
    async () => {
      for (const f of page.frames()) if (await f.$(selector).catch(() => null)) return f;
      return undefined;
    },
    (f) => f !== undefined,
    UI_TIMEOUT,
  );
  return found!;
}

/** Two frames of the workbench, by which it has laid itself out for a change of size or layout. */
async function nextFrames(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

export async function waitForWorkbench(page: Page): Promise<void> {
  await page.locator('.monaco-workbench').waitFor({ timeout: UI_TIMEOUT });
  // The activity bar is filled once the extension host has registered view containers.
  await page.locator('.part.activitybar').waitFor({ timeout: UI_TIMEOUT });
}

/**
 * Reloads the window and waits for the new page's workbench. The old page stays on
 * screen while the reload starts, so waiting for a workbench alone could find the old one.
 */
export async function reloadWindow(page: Page): Promise<void> {
  const loaded = page.waitForEvent('domcontentloaded', { timeout: UI_TIMEOUT });
  await runCommand(page, 'Developer: Reload Window');
  await loaded;
  await waitForWorkbench(page);
}

/**
 * Shows a view ("Cluster") through its "Focus on … View" command, never the
 * activity-bar icon: the icon toggles, so a click on a container a reloaded window has
 * already restored would close the side bar instead.
 */
export async function focusView(page: Page, view: string): Promise<void> {
  await runCommand(page, `Focus on ${view} View`);
  await sidebarPane(page, view).waitFor({ timeout: UI_TIMEOUT });
}

/** A view pane of the side bar, by its title ("Bugs", "Cluster"...); the header's aria-label also holds the view's description. */
export function sidebarPane(page: Page, title: string): Locator {
  return page.locator('.part.sidebar .pane', { has: page.locator('.pane-header .title', { hasText: new RegExp(`^${title}$`, 'i') }) });
}

export function treeRows(pane: Locator): Locator {
  return pane.locator('.monaco-list-row[role="treeitem"]');
}

/**
 * Every row label of a (virtualised) tree: only visible rows are in the DOM, so walk the
 * keyboard focus down from the top, a row at a time, until it stops moving.
 */
export async function collectTreeLabels(page: Page, pane: Locator): Promise<string[]> {
  const labels = new Set<string>();
  const rows = treeRows(pane);
  await rows.first().waitFor();
  // Focus the list without clicking: a click would toggle a group or run an item's command.
  await pane.locator('.monaco-list').first().focus();
  await page.keyboard.press('Home');
  const focused = () => pane.locator('.monaco-list-row.focused').first().getAttribute('aria-label').catch(() => null);
  for (let steps = 0; steps < 1000; steps++) {
    for (const label of await rowLabels(pane)) labels.add(label);
    const at = await focused();
    await page.keyboard.press('ArrowDown');
    if ((await focused()) === at) break;
  }
  for (const label of await rowLabels(pane)) labels.add(label);
  return [...labels];
}

/**
 * Waits until `read` returns a value `ok` accepts, polling; on timeout the error shows
 * the last value read, so a failure says what the workbench showed instead.
 */
export async function waitUntil<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The aria-labels of a tree's rendered rows. */
export function rowLabels(pane: Locator): Promise<string[]> {
  return treeRows(pane).evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
}

/** The text of the editor or output view under `scope`, with Monaco's non-breaking spaces made plain. */
export async function editorText(scope: Locator): Promise<string> {
  const lines = await scope.locator('.view-lines').first().innerText().catch(() => '');
  return lines.replace(/\u00a0/g, ' ');
}

/** Runs a command through the command palette by its full title ("DDBench: Open Bug"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input.input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  // Right after a window reload the keyboard focus can be nowhere (F1 opens nothing), and
  // the palette lists only the commands known when it opened (a view's "Focus on" command
  // comes with the extension's contributions): close, focus the workbench, and try again.
  const deadline = Date.now() + UI_TIMEOUT;
  // The palette of the previous command can still be on screen, closing: F1 must open a new one.
  await input.waitFor({ state: 'hidden', timeout: 5000 }).catch(() => {});
  for (;;) {
    await page.keyboard.press('F1');
    // A palette that closes under us (focus in a webview, where F1 opened nothing) is tried again.
    if (await input.waitFor({ timeout: 5000 }).then(() => input.fill(`>${title}`, { timeout: 5000 })).then(() => true, () => false)) {
      if (await row.waitFor({ timeout: 10_000 }).then(() => true, () => false)) break;
      await page.keyboard.press('Escape');
    }
    if (Date.now() > deadline) throw new Error(`the command palette did not offer "${title}"`);
    await page.locator('.part.editor').click({ position: { x: 200, y: 200 } }).catch(() => {});
  }
  await row.click();
}

/** Picks the quick-input row whose label starts with `label`. */
export async function pickQuickItem(page: Page, label: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: UI_TIMEOUT });
  await row.click();
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
