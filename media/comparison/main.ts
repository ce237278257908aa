// The attempt comparison inside a VS Code webview: the report the host sends, drawn with
// the same renderer as `ddbench report --html` (tables and inline SVG), plus a toolbar.
// Every message is checked with the shared zod protocol; no inline handlers (strict CSP).
import { reportBody } from '../../src/core/study/report-html';
import { esc } from '../../src/core/study/report-charts';
import { ToView, type ToHost, type ViewState } from '../../src/core/study/view-protocol';
import { receive, vscodeHost } from '../shared/host';

const host = vscodeHost<ToHost, ViewState>();
const root = document.getElementById('app');
if (root === null) throw new Error('the comparison page has no #app element');
const app = root;
app.innerHTML = '<p>Loading the records…</p>';

// A message that fails the protocol is not ours, or from a stale build: it is ignored.
receive(host, ToView, (msg) => {
  if (msg.type === 'error') {
    app.innerHTML = `${toolbar()}<p class="error" role="alert">${esc(msg.message)}</p>`;
    return;
  }
  const { report, title, attemptInProgress, source } = msg;
  host.saveState({ source });
  const comparable = report.attempts.filter((a) => a.status !== 'in-progress');
  const compare = attemptInProgress
    ? `<p class="meta">The reference fix is shown once your attempt has ended.</p>`
    : comparable.length
      ? `<h2>Compare a fix with the reference</h2><ul class="compare">${comparable
          .map((a) => `<li><button type="button" data-compare="${esc(a.id)}">${esc(`${a.bugId} · ${a.participant ?? a.group} · ${a.status} · ${a.startedAt.slice(0, 16).replace('T', ' ')}`)}</button></li>`)
          .join('')}</ul>`
      : '';
  app.innerHTML = `${toolbar(title)}<div class="ddbench-report">${reportBody(report)}${compare}</div>`;
}, () => undefined);

app.addEventListener('click', (e) => {
  const button = (e.target as HTMLElement).closest('button');
  if (!button) return;
  const id = button.dataset.compare;
  if (id !== undefined) host.post({ type: 'comparePatch', attemptId: id });
  else if (button.dataset.action === 'refresh') host.post({ type: 'refresh' });
  else if (button.dataset.action === 'folders') host.post({ type: 'pickFolders' });
  else if (button.dataset.action === 'export') host.post({ type: 'exportHtml' });
});

function toolbar(title = ''): string {
  return `<div class="toolbar" role="toolbar"><span class="title">${esc(title)}</span>
<button type="button" data-action="refresh" title="Read the records again">Refresh</button>
<button type="button" data-action="folders" title="Compare the records in other folders">Records Folders…</button>
<button type="button" data-action="export" title="Save this report as one HTML file that works offline">Export HTML…</button></div>`;
}

host.post({ type: 'ready' });
