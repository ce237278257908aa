/**
 * Benchmark (not a test): the timeline front-end in headless Chromium.
 *
 *   npm run build && npx tsx bench/timeline-render.ts [runs=5] [paintEvents=100000] [frameEvents=1000000]
 *
 * 1. First paint: the HTML export (`ddbench timeline --html`) of a `paintEvents` run,
 *    opened in a fresh page each run; the time from navigation start until the first
 *    frame drawn with data has been painted and committed (parsing the page, decoding
 *    the embedded store, building the model, the overview and the first window, the
 *    draw), as the page records it; and when the page first answers after it.
 * 2. Pan and zoom at `frameEvents`: in the export of that run, (a) the frame drawn on
 *    every pan/zoom input (the canvas redrawn at the new view from the last window,
 *    reprojected), and (b) the round trip for the fresh window at the new view (the
 *    model aggregating the visible events per pixel; inside VS Code this runs in the
 *    extension host, off the webview's thread) at 100%, 10% and 1% of the run.
 *
 * Prints the median and the spread of each. Needs Chromium at /usr/bin/chromium
 * (or $DDBENCH_CHROMIUM).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { EventRecord } from '../src/core/events/record';
import { loadRun } from '../src/core/timeline/runs';
import { writeTimelineHtml } from '../src/core/timeline/export-html';
import { launchChromium, prng } from './support';

const NODES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const CLIENT = 'client-1';
const TYPES = ['AppendEntries', 'AppendEntriesResp', 'Heartbeat', 'Put', 'PutResp'];
const LOGS = ['commit index advanced', 'applied entry', 'lease renewed', 'snapshot taken', 'became follower'];


/**
 * A Raft-like run: five nodes and a client exchanging messages with vector clocks,
 * logs with source lines, 1% of messages dropped by the router, and every 50,000
 * events a partition and a paused node, healed and resumed later.
 */
async function generate(file: string, count: number): Promise<void> {
  const random = prng(7);
  const endpoints = [...NODES, CLIENT];
  const clocks = new Map(endpoints.map((n) => [n, { [n]: 0 } as Record<string, number>]));
  const due = new Map<number, { to: string; from: string; msgId: string; type: string; vc: Record<string, number> }[]>();
  const out = fs.createWriteStream(file);
  let batch: string[] = [];
  let written = 0;
  const emit = async (e: EventRecord): Promise<void> => {
    batch.push(JSON.stringify(e));
    written++;
    if (batch.length >= 5000) {
      if (!out.write(batch.join('\n') + '\n')) await new Promise((resolve) => out.once('drain', resolve));
      batch = [];
    }
  };
  const tick = (node: string): Record<string, number> => {
    const vc = clocks.get(node) as Record<string, number>;
    vc[node]++;
    return { ...vc };
  };
  let seq = 0;
  for (let step = 0; written < count; step++) {
    const ts = step * 20;
    for (const m of due.get(step) ?? []) {
      const vc = clocks.get(m.to) as Record<string, number>;
      for (const [k, v] of Object.entries(m.vc)) if (v > (vc[k] ?? 0)) vc[k] = v;
      await emit({ ts: ts + 1, node: m.to, kind: 'recv', msg: m.type, msgId: m.msgId, peer: m.from, vc: tick(m.to) });
    }
    due.delete(step);
    if (written % 50_000 < 3 && step > 10) {
      await emit({ ts, node: 'harness', kind: 'fault', level: 'warn', msg: 'partition', fields: { groups: [['n1'], ['n2', 'n3', 'n4', 'n5']] } });
      await emit({ ts: ts + 2, node: 'n3', kind: 'proc', level: 'info', msg: 'pause' });
    }
    if (written % 50_000 >= 20_000 && written % 50_000 < 20_003) {
      await emit({ ts, node: 'harness', kind: 'fault', level: 'warn', msg: 'heal', fields: {} });
      await emit({ ts: ts + 2, node: 'n3', kind: 'proc', level: 'info', msg: 'resume' });
    }
    const from = random() < 0.1 ? CLIENT : NODES[Math.floor(random() * NODES.length)];
    if (random() < 0.25) {
      await emit({ ts: ts + 3, node: from, kind: 'log', level: random() < 0.02 ? 'warn' : 'info', msg: LOGS[Math.floor(random() * LOGS.length)], vc: tick(from), src: { file: 'src/raft.js', line: 100 + Math.floor(random() * 400) }, fields: { term: 3, index: step } });
      continue;
    }
    const to = NODES.filter((n) => n !== from)[Math.floor(random() * (NODES.length - 1))];
    const msgId = `${from}:${++seq}`;
    const type = TYPES[Math.floor(random() * TYPES.length)];
    const vc = tick(from);
    await emit({ ts: ts + 5, node: from, kind: 'send', msg: type, msgId, peer: to, vc, fields: { body: { term: 3, index: step } } });
    if (random() < 0.01) {
      await emit({ ts: ts + 6, node: 'router', kind: 'fault', level: 'warn', msg: 'drop', msgId, peer: to, fields: { from, to, type, reason: 'rule' } });
      continue;
    }
    const at = step + 1 + Math.floor(random() * 40);
    due.set(at, [...(due.get(at) ?? []), { to, from, msgId, type, vc }]);
  }
  out.end(batch.length > 0 ? batch.join('\n') + '\n' : '');
  await new Promise((resolve) => out.on('finish', resolve));
}

async function exportRun(dir: string, count: number): Promise<string> {
  const events = path.join(dir, `events-${count}.jsonl`);
  const html = path.join(dir, `timeline-${count}.html`);
  // The events are kept between runs; the page is written anew, since it embeds the current front-end bundle.
  if (!fs.existsSync(events)) {
    await generate(`${events}.partial`, count);
    fs.renameSync(`${events}.partial`, events);
  }
  const run = await loadRun([events]);
  const { bytes } = writeTimelineHtml([run], html, `benchmark: ${count} events`);
  console.log(`  ${count} events: ${(fs.statSync(events).size / 1e6).toFixed(0)} MB of JSONL, an HTML page of ${(bytes / 1e6).toFixed(1)} MB`);
  return html;
}

/**
 * `paintMs`: when the page's first frame with data had been painted and committed, as
 * the page recorded it. `answerMs`: when the page first answered a script from here
 * after that frame; work the page does on its main thread right after the frame (the
 * clock diagnostics, decoding the events' texts) delays it, not the frame.
 */
async function open(browser: Browser, html: string): Promise<{ page: Page; paintMs: number; answerMs: number }> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`file://${html}`, { timeout: 600_000 });
  await page.waitForFunction(() => window.__ddbenchTimeline?.paintedMs !== undefined, null, { timeout: 600_000, polling: 5 });
  const { paintMs, answerMs } = await page.evaluate(() => ({ paintMs: window.__ddbenchTimeline?.paintedMs ?? NaN, answerMs: performance.now() }));
  await page.evaluate(() => window.__ddbenchTimeline?.idle());
  return { page, paintMs, answerMs };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const show = (xs: number[]): string => `median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, n=${xs.length})`;

/** Pan and zoom steps at one zoom level: draw-only frames, and fresh-window round trips. */
async function frames(page: Page, fraction: number, steps: number): Promise<{ draw: number[]; window: number[] }> {
  return page.evaluate(
    async ({ fraction, steps }) => {
      const h = window.__ddbenchTimeline;
      if (h === undefined) throw new Error('no timeline hook');
      await h.idle();
      const [lo, hi] = h.view;
      const span = (hi - lo) * fraction;
      const draw: number[] = [];
      const win: number[] = [];
      for (let k = 0; k < steps; k++) {
        const from = lo + ((hi - lo - span) * k) / Math.max(1, steps - 1);
        h.setView(from, from + span);
        const frame = h.drawNow();
        if (frame !== undefined) draw.push(frame.ms);
        await h.idle();
        win.push(h.windowMs);
      }
      h.setView(lo, hi);
      await h.idle();
      return { draw, window: win };
    },
    { fraction, steps },
  );
}

async function main(): Promise<void> {
  const [runs = 5, paintEvents = 100_000, frameEvents = 1_000_000] = process.argv.slice(2).map(Number);
  const dir = path.join(os.tmpdir(), 'ddbench-bench-timeline');
  fs.mkdirSync(dir, { recursive: true });
  console.log(`timeline render benchmark (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}); data in ${dir}`);
  const paintHtml = await exportRun(dir, paintEvents);
  const frameHtml = await exportRun(dir, frameEvents);
  const browser = await launchChromium();
  try {
    const paints: number[] = [];
    const answers: number[] = [];
    for (let r = 0; r < runs; r++) {
      const { page, paintMs, answerMs } = await open(browser, paintHtml);
      paints.push(paintMs);
      answers.push(answerMs);
      await page.close();
    }
    console.log(`first paint, ${paintEvents} events: ${show(paints)} (target < 1000 ms); first answer after it ${show(answers)}`);
    const { page, paintMs, answerMs } = await open(browser, frameHtml);
    console.log(`first paint, ${frameEvents} events: ${paintMs.toFixed(0)} ms, first answer after it ${answerMs.toFixed(0)} ms (one run)`);
    for (const fraction of [1, 0.1, 0.01]) {
      const f = await frames(page, fraction, Math.max(10, runs * 4));
      console.log(`${frameEvents} events, view = ${fraction * 100}% of the run: pan/zoom frame ${show(f.draw)} (target < 16 ms); fresh window ${show(f.window)}`);
    }
    await page.close();
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
