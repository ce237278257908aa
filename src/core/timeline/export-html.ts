import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { UserError } from '../errors';
import { packageRoot } from '../paths';
import { packStore } from './embed';
import type { RunSource } from './model';
import { PAGE_CONFIG_ID, runDataId, runTextId, timelinePage, type PageConfig } from './page';

/** The page bundle esbuild writes from media/timeline-page/main.ts. */
function pageBundle(): { script: string; style: string } {
  const dir = path.join(packageRoot(), 'dist', 'media');
  const script = path.join(dir, 'timeline-page.js');
  const style = path.join(dir, 'timeline-page.css');
  if (!fs.existsSync(script) || !fs.existsSync(style)) throw new UserError(`the timeline page bundle is missing (${script}): run \`npm run build\` first`);
  return { script: fs.readFileSync(script, 'utf8'), style: fs.readFileSync(style, 'utf8') };
}

/**
 * Writes one HTML file that shows the runs offline in any current browser: the
 * front-end bundle and style inlined, each run's store packed, gzipped and base64'd
 * into two data blocks (columns, event texts) the page decodes itself. Written to a temporary name first, so
 * `out` is either the old file or the complete new one.
 */
export function writeTimelineHtml(runs: readonly RunSource[], out: string, title: string): { bytes: number } {
  const bundle = pageBundle();
  const config: PageConfig = { title, runs: runs.map(({ label, inputs }) => ({ label, inputs })) };
  const html = timelinePage({
    title,
    nonce: randomBytes(16).toString('base64'),
    script: { inline: bundle.script },
    style: { inline: bundle.style },
    data: [
      { id: PAGE_CONFIG_ID, type: 'application/json', text: JSON.stringify(config) },
      ...runs.flatMap((run, r) => {
        const packed = packStore(run.store);
        return [
          { id: runDataId(r), type: 'application/octet-stream', text: gzipSync(packed.columns).toString('base64') },
          { id: runTextId(r), type: 'application/octet-stream', text: gzipSync(packed.text).toString('base64') },
        ];
      }),
    ],
  });
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, html);
  fs.renameSync(tmp, out);
  return { bytes: Buffer.byteLength(html) };
}
