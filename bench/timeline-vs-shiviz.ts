/**
 * Benchmark (not a test): DDBench's timeline page against ShiViz on the same logs,
 * in the same headless Chromium, offline.
 *
 *   npm run build && DDBENCH_SHIVIZ_DIR=/path/to/shiviz npx tsx bench/timeline-vs-shiviz.ts [runs=3]
 *
 * DDBENCH_SHIVIZ_DIR is a checkout of github.com/DistributedClocks/shiviz (its
 * index.html and local_scripts run offline); without it the comparison is skipped.
 * The logs are ShiViz's own chord.log (1,235 events) and generated GoVector-style logs
 * (five hosts passing messages, vector clocks) of 1,000, 5,000 and 20,000 events.
 * Each run opens a fresh page, alternating the two tools, and takes the time from
 * navigation start to the first frame drawn with its edges: for DDBench the page's own
 * record (`paintedMs`, with `stats.arrows > 0`); for ShiViz the log, its regex and
 * the host order put in its form, Visualize clicked, and two animation frames after
 * the first edge is in its SVG. Network requests are refused in both pages.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, prng } from './support';

const root = path.resolve(__dirname, '..');
const HOST_FIRST = '(?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)';
const HOSTS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];


/** A GoVector-style log: `host {clock}` then the event; sends are received a few steps later. */
function generate(count: number): string {
  const random = prng(11);
  const clocks = new Map(HOSTS.map((h) => [h, { [h]: 0 } as Record<string, number>]));
  const inFlight: { to: string; vc: Record<string, number>; due: number; text: string }[] = [];
  const lines: string[] = [];
  const event = (host: string, text: string, merge?: Record<string, number>): Record<string, number> => {
    const vc = clocks.get(host) as Record<string, number>;
    for (const [k, v] of Object.entries(merge ?? {})) if (v > (vc[k] ?? 0)) vc[k] = v;
    vc[host]++;
    lines.push(`${host} ${JSON.stringify(vc)}`, text);
    return { ...vc };
  };
  for (let step = 0; lines.length / 2 < count; step++) {
    const ready = inFlight.filter((m) => m.due <= step);
    for (const m of ready) {
      if (lines.length / 2 >= count) break;
      event(m.to, `received ${m.text}`, m.vc);
      inFlight.splice(inFlight.indexOf(m), 1);
    }
    if (lines.length / 2 >= count) break;
    const from = HOSTS[Math.floor(random() * HOSTS.length)];
    if (random() < 0.3) {
      event(from, `local step ${step}`);
      continue;
    }
    const to = HOSTS.filter((h) => h !== from)[Math.floor(random() * (HOSTS.length - 1))];
    const text = `msg ${step} from ${from} to ${to}`;
    inFlight.push({ to, vc: event(from, `sending ${text}`), due: step + 1 + Math.floor(random() * 6), text });
  }
  return lines.join('\n') + '\n';
}

async function ddbenchFirstFrame(browser: Browser, html: string): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.route(/^(?!file:|data:|blob:)/, (r) => r.abort());
  await page.goto(`file://${html}`, { timeout: 600_000 });
  await page.waitForFunction(() => window.__ddbenchTimeline?.paintedMs !== undefined, null, { timeout: 600_000, polling: 5 });
  const { paintMs, arrows } = await page.evaluate(() => ({ paintMs: window.__ddbenchTimeline?.paintedMs ?? NaN, arrows: window.__ddbenchTimeline?.stats?.arrows ?? 0 }));
  await page.close();
  if (arrows === 0) throw new Error(`${html}: the first frame drew no arrows`);
  return paintMs;
}

async function shivizFirstFrame(browser: Browser, site: string, log: string): Promise<number> {
  const page: Page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.route(/^(?!file:|data:|blob:)/, (r) => r.abort());
  await page.goto(`file://${path.join(site, 'index.html')}`, { timeout: 600_000 });
  const ms = await page.evaluate(
    async ({ log, regex }) => {
      const $ = (window as unknown as { $: (s: string) => { val(v?: string): unknown; click(): void; prop(k: string, v: boolean): void; change(): void } }).$;
      $('#input').val(log);
      $('#parser').val(regex);
      $('#delimiter').val('');
      $('#visualize').prop('disabled', false);
      $('#visualize').click();
      for (;;) {
        if (document.querySelector('#vizContainer svg line, #vizContainer svg path.edge, #vizContainer svg .line') !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // Inline, not a named helper: tsx would wrap a named function in a helper the page does not have.
      await new Promise((resolve) => requestAnimationFrame(resolve));
      await new Promise((resolve) => requestAnimationFrame(resolve));
      return performance.now();
    },
    { log, regex: HOST_FIRST },
  );
  await page.close();
  return ms;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 3);
  const site = process.env.DDBENCH_SHIVIZ_DIR;
  if (site === undefined || !fs.existsSync(path.join(site, 'index.html'))) {
    console.log('timeline vs ShiViz: skipped (set DDBENCH_SHIVIZ_DIR to a checkout of github.com/DistributedClocks/shiviz)');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-vs-shiviz-'));
  const browser = await launchChromium();
  try {
    const logs: { name: string; text: string }[] = [
      { name: 'chord.log (ShiViz example, 1,235 events)', text: fs.readFileSync(path.join(root, 'test', 'fixtures', 'interop', 'shiviz', 'chord.log'), 'utf8') },
      ...[1_000, 5_000, 20_000].map((n) => ({ name: `generated, ${n.toLocaleString('en')} events`, text: generate(n) })),
    ];
    console.log(`timeline vs ShiViz: first frame with edges, from navigation start; medians of ${runs} alternating runs (load ${os.loadavg()[0].toFixed(1)})`);
    for (const [k, log] of logs.entries()) {
      const file = path.join(dir, `log-${k}.log`);
      fs.writeFileSync(file, log.text);
      const html = path.join(dir, `log-${k}.html`);
      const made = spawnSync(process.execPath, [path.join(root, 'bin', 'ddbench.js'), 'timeline', file, '--regex', HOST_FIRST, '--html', html], { encoding: 'utf8' });
      if (made.status !== 0) throw new Error(made.stderr);
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let r = 0; r < runs; r++) {
        ours.push(await ddbenchFirstFrame(browser, html));
        theirs.push(await shivizFirstFrame(browser, site, log.text));
      }
      const a = median(ours);
      const b = median(theirs);
      console.log(`  ${log.name}: DDBench ${a.toFixed(0)} ms (${Math.min(...ours).toFixed(0)}–${Math.max(...ours).toFixed(0)}), ShiViz ${b.toFixed(0)} ms (${Math.min(...theirs).toFixed(0)}–${Math.max(...theirs).toFixed(0)}): ${(b / a).toFixed(1)}× sooner`);
    }
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
