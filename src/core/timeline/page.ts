/**
 * The self-contained HTML page of a timeline, shared by the VS Code panel (which
 * loads the bundle from the extension) and the HTML export (which inlines it with
 * the data). Strict CSP: nothing runs but the nonce'd script, nothing loads from
 * anywhere but the given source.
 */
import { z } from 'zod';
import { MAX_RUNS } from './protocol';

export const PAGE_CONFIG_ID = 'ddbench-config';
export const runDataId = (run: number): string => `ddbench-run-${run}`;
/** The block with the run's event texts, decoded after the first frame. */
export const runTextId = (run: number): string => `ddbench-run-${run}-text`;

/** What the export page says about its runs; the events themselves come in separate blocks. */
export const PageConfig = z.object({
  title: z.string(),
  runs: z.array(z.object({ label: z.string(), inputs: z.array(z.string()) })).min(1).max(MAX_RUNS),
});
export type PageConfig = z.infer<typeof PageConfig>;

export interface PageParts {
  title: string;
  nonce: string;
  /** The webview's resource origin (VS Code), or none for a page that loads nothing. */
  cspSource?: string;
  script: { src: string } | { inline: string };
  style: { href: string } | { inline: string };
  /** Extra blocks for the body (embedded data); never executed. */
  data?: { id: string; type: string; text: string }[];
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Inline script or JSON text can hold "</script"; this spelling means the same to JS and JSON and does not end the element. */
const escapeScript = (s: string): string => s.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

export function timelinePage(p: PageParts): string {
  const src = p.cspSource === undefined ? '' : ` ${p.cspSource}`;
  const csp = `default-src 'none'; img-src${src} data:; font-src${src}; style-src${src} 'nonce-${p.nonce}'; script-src 'nonce-${p.nonce}';`;
  const style = 'href' in p.style ? `<link rel="stylesheet" nonce="${p.nonce}" href="${escapeHtml(p.style.href)}">` : `<style nonce="${p.nonce}">${p.style.inline.replace(/<\/(style)/gi, '<\\/$1')}</style>`;
  const script = 'src' in p.script ? `<script nonce="${p.nonce}" src="${escapeHtml(p.script.src)}"></script>` : `<script nonce="${p.nonce}">${escapeScript(p.script.inline)}</script>`;
  const data = (p.data ?? []).map((d) => `<script type="${escapeHtml(d.type)}" id="${escapeHtml(d.id)}">${escapeScript(d.text)}</script>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
${style}
</head>
<body>
<div id="app"></div>
${data}
${script}
</body>
</html>
`;
}
