/**
 * The timeline as a self-contained page (`ddbench timeline --html`): the event data
 * is embedded in the page and the host is the page's own data module, the same
 * TimelineModel the extension runs, reached through the same checked protocol.
 */
import '../timeline/timeline.css';
import { unpackStore } from '../../src/core/timeline/embed';
import { TimelineModel } from '../../src/core/timeline/model';
import { PageConfig, PAGE_CONFIG_ID, runDataId, runTextId } from '../../src/core/timeline/page';
import type { ToHost, ToWebview, UiState } from '../../src/core/timeline/protocol';
import { TimelineSession } from '../../src/core/timeline/session';
import { TimelineApp } from '../timeline/app';
import type { TimelineHost } from '../timeline/client';

const STATE_KEY = 'ddbenchTimeline';

/** Requests that read events' JSON text (details, search, a text filter), which arrives after the first frame. */
function needsText(msg: ToHost): boolean {
  switch (msg.type) {
    case 'details':
    case 'search':
    case 'step':
    case 'openSource':
      return true;
    case 'window':
      return msg.filter.text !== undefined && msg.filter.text !== '';
    default:
      return false;
  }
}

/**
 * Messages cross asynchronously, as postMessage does, so the app cannot come to
 * depend on answers arriving synchronously. Messages sent before the data is
 * decoded wait for the session, and those that need the events' text for it.
 */
class PageHost implements TimelineHost {
  private session: TimelineSession | undefined;
  private textLoaded = false;
  private waiting: ToHost[] = [];
  private handler: ((msg: unknown) => void) | undefined;

  connect(session: TimelineSession): void {
    this.session = session;
    this.flush();
  }

  /** Every event's text is in the stores now. */
  loadedText(): void {
    this.textLoaded = true;
    this.flush();
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const msg of waiting) this.post(msg);
  }

  deliver(msg: ToWebview): void {
    queueMicrotask(() => this.handler?.(msg));
  }

  post(msg: ToHost): void {
    const session = this.session;
    if (session === undefined || (!this.textLoaded && needsText(msg))) this.waiting.push(msg);
    else queueMicrotask(() => session.receive(msg));
  }

  listen(handler: (msg: unknown) => void): void {
    this.handler = handler;
  }

  loadState(): unknown {
    const state: unknown = history.state;
    return typeof state === 'object' && state !== null ? (state as Record<string, unknown>)[STATE_KEY] : undefined;
  }

  saveState(state: UiState): void {
    history.replaceState({ [STATE_KEY]: state }, '');
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The browser's own decoder (Chromium 140, Firefox 133, Safari 18.2), native speed; undefined in older browsers. */
const nativeFromBase64 = (Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array<ArrayBuffer> }).fromBase64;

/** A table-driven base64 decoder for browsers without Uint8Array.fromBase64: atob plus a per-character copy is several times slower on tens of MB. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  if (nativeFromBase64 !== undefined) return nativeFromBase64(text);
  const value = new Uint8Array(128);
  for (let k = 0; k < BASE64.length; k++) value[BASE64.charCodeAt(k)] = k;
  const clean = text.replace(/[^A-Za-z0-9+/]/g, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let o = 0;
  for (let i = 0; i + 3 < clean.length; i += 4) {
    const n = (value[clean.charCodeAt(i)] << 18) | (value[clean.charCodeAt(i + 1)] << 12) | (value[clean.charCodeAt(i + 2)] << 6) | value[clean.charCodeAt(i + 3)];
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  const rest = clean.length % 4;
  if (rest > 1) {
    const i = clean.length - rest;
    const n = (value[clean.charCodeAt(i)] << 18) | (value[clean.charCodeAt(i + 1)] << 12) | (rest > 2 ? value[clean.charCodeAt(i + 2)] << 6 : 0);
    out[o++] = n >> 16;
    if (rest > 2) out[o++] = (n >> 8) & 255;
  }
  return out.subarray(0, o);
}

/** Written into the inflater directly: a Blob's stream would carry the bytes through the browser process first, in small chunks. */
async function gunzip(base64: string): Promise<Uint8Array> {
  const inflate = new DecompressionStream('gzip');
  const writer = inflate.writable.getWriter();
  const written = writer.write(fromBase64(base64)).then(() => writer.close());
  const [out] = await Promise.all([new Response(inflate.readable).arrayBuffer(), written]);
  return new Uint8Array(out);
}

function embedded(id: string): string {
  const text = document.getElementById(id)?.textContent;
  if (text == null) throw new Error(`the page is missing its embedded data (#${id})`);
  return text;
}

async function start(): Promise<void> {
  const root = document.getElementById('app');
  if (root === null) throw new Error('the timeline page has no #app element');
  const host = new PageHost();
  try {
    new TimelineApp(root, host);
    const config = PageConfig.parse(JSON.parse(embedded(PAGE_CONFIG_ID)));
    const runs = await Promise.all(config.runs.map(async (run, r) => ({ ...run, ...unpackStore(await gunzip(embedded(runDataId(r)).trim())) })));
    const model = new TimelineModel(runs, { title: config.title });
    host.connect(new TimelineSession(model, (msg) => host.deliver(msg)));
    // The texts are most of the bytes: decoded once the first frame is up.
    await new Promise((resolve) => requestIdleCallback(resolve, { timeout: 1000 }));
    const texts = await Promise.all(runs.map(async (_, r) => gunzip(embedded(runTextId(r)).trim())));
    texts.forEach((text, r) => runs[r].loadText(text));
    host.loadedText();
  } catch (err) {
    const box = document.createElement('pre');
    box.textContent = `This timeline page could not be opened: ${err instanceof Error ? err.message : String(err)}`;
    root.replaceChildren(box);
    throw err;
  }
}

void start();
