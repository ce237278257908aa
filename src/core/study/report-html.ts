import { barChart, dotChart, esc, type IntervalRow } from './report-charts';
import { PEOPLE, type Cell, type GroupRef, type Report, type Summary } from './report';

/**
 * The report as HTML: `reportBody` is the content (tables and inline SVG charts, no
 * script, no style attributes) shared by the standalone page and the editor's webview;
 * `reportPage` wraps it with its stylesheet into one file that works offline.
 */

export function reportPage(r: Report): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>DDBench report</title>
<style>${PAGE_COLOURS}${REPORT_CSS}</style></head>
<body><main class="ddbench-report">${reportBody(r)}</main></body></html>
`;
}

export function reportBody(r: Report): string {
  const parts = [
    `<h1>DDBench report</h1>`,
    `<p class="meta">${r.counted} finished attempt(s) from ${r.files.length} file(s)${r.inProgress ? `, ${r.inProgress} still in progress (not counted)` : ''}${r.errors ? `, ${r.errors} run error(s) (not counted)` : ''}${r.interrupted ? `, ${r.interrupted} interrupted (not counted)` : ''}; generated ${esc(r.generatedAt)}.</p>`,
    provenance(r),
    problems(r),
  ];
  if (r.counted === 0) return parts.join('') + `<p>No finished attempts to compare yet.</p>`;
  const overall = r.groups.map((g) => ({ g, s: cellOf(r.cells, 'all', g.id)! }));
  parts.push(
    `<h2>Overall</h2>`,
    barChart('Pass rate by group (95% Wilson interval)', overall.map(({ g, s }) => rateRow(g, s)), 1, pct),
    summaryTable(overall.map(({ g, s }) => [g.id, s])),
  );
  const timed = overall.filter(({ s }) => s.timeToFixMs.median !== null);
  if (timed.length) {
    const maxMin = Math.max(...timed.map(({ s }) => s.timeToFixMs.median! / 60_000), 1);
    parts.push(barChart('Median time to fix (minutes, fixed attempts)', timed.map(({ g, s }) => ({ label: g.id, value: s.timeToFixMs.median! / 60_000, cls: groupClass(g), note: minutes(s.timeToFixMs.median) })), niceMax(maxMin), (v) => v.toFixed(v < 10 ? 1 : 0)));
  }
  if (r.lift.perModel.length) {
    const rows = [...r.lift.perModel, ...(r.lift.overall ? [r.lift.overall] : [])];
    parts.push(
      `<h2>Context lift</h2><p class="meta">Pass rate with the bounded debugging context minus without it, per model over the bugs it ran in both conditions, and over all models' paired runs pooled; 95% Newcombe (hybrid score) interval.</p>`,
      dotChart('Context lift (percentage points)', rows.map((l) => ({ label: l.model, value: l.lift, ci: l.ci, cls: l.model === 'all models' ? 'dot-all' : 'dot', note: signedPp(l.lift) })), (v) => `${v > 0 ? '+' : ''}${Math.round(v * 100)}`),
      table(
        ['model', 'bugs', 'symptom-only', 'context-augmented', 'lift', '95% CI', 'McNemar p (pairs, discordant)'],
        rows.map((l) => [l.model, String(l.bugs.length), rateText(l.symptomOnly), rateText(l.contextAugmented), signedPp(l.lift), `${signedPp(l.ci[0])} … ${signedPp(l.ci[1])}`, `${pValue(l.mcnemar.p)} (${l.mcnemar.pairs}, ${l.mcnemar.symptomOnlyOnly}:${l.mcnemar.contextOnly})`]),
      ),
    );
  }
  parts.push(efficiencySection(r));
  if (r.spread.length) {
    parts.push(
      `<h2>Spread across models</h2>`,
      table(['condition', 'models', 'lowest', 'highest', 'spread'], r.spread.map((s) => [s.condition, String(s.models), `${s.min.model} ${pct(s.min.rate)}`, `${s.max.model} ${pct(s.max.rate)}`, `${s.spreadPp.toFixed(1)} pp`])),
    );
  }
  parts.push(`<h2>Per bug</h2>`, heatmap(r));
  const tiers = [1, 2, 3].filter((t) => r.cells.some((c) => c.scope === 'tier' && c.tier === t));
  if (tiers.length) {
    parts.push(
      `<h2>Per tier</h2>`,
      table(['tier', ...r.groups.map((g) => g.id)], tiers.map((t) => [String(t), ...r.groups.map((g) => cellText(r.cells.find((c) => c.scope === 'tier' && c.tier === t && c.group === g.id)?.summary))])),
    );
  }
  if (r.peopleVsAgents.length) {
    const rows: IntervalRow[] = r.peopleVsAgents.flatMap((p) => [
      { label: `${p.bugId} · people`, value: p.people.rate, ci: p.people.ci, cls: 'bar-people', note: `${rateText(p.people)} ${minutes(p.people.timeToFixMs.median)}` },
      { label: `${p.bugId} · agents`, value: p.agents.rate, ci: p.agents.ci, cls: 'bar-agents', note: `${rateText(p.agents)} ${minutes(p.agents.timeToFixMs.median)}` },
    ]);
    parts.push(
      `<h2>People and agents</h2>`,
      barChart('Pass rate per bug: people and agents (all models and conditions)', rows, 1, pct),
      table(
        ['bug', 'people', 'agents', 'difference', '95% CI', 'people: median time', 'agents: median time'],
        r.peopleVsAgents.map((p) => [p.bugId, rateText(p.people), rateText(p.agents), signedPp(p.difference), `${signedPp(p.ci[0])} … ${signedPp(p.ci[1])}`, minutes(p.people.timeToFixMs.median), minutes(p.agents.timeToFixMs.median)]),
      ),
    );
  }
  parts.push(twinsSection(r));
  parts.push(
    `<h2>Attempts</h2>`,
    r.attempts.length > 30 ? `<details><summary>${r.attempts.length} attempts</summary>` : '',
    table(
      ['bug', 'group', 'participant', 'status', 'started', 'time to fix', 'submissions', 'patch lines', 'similarity', 'hints'],
      r.attempts.map((a) => [a.bugId, a.group, a.participant ?? '', a.status, `${a.startedAt.replace('T', ' ').slice(0, 16)}${a.fromEdits ? ' (from edits)' : ''}`, minutes(a.timeToFixMs), String(a.submissions), a.patchLines === null ? '' : String(a.patchLines), a.similarity === null ? '' : a.similarity.toFixed(2), String(a.hints)]),
    ),
    r.attempts.length > 30 ? '</details>' : '',
    `<p class="meta">Similarity to the reference fix: Jaccard index of the two patches' changed lines (each added or removed line, by file, whitespace collapsed); 1 is the same change, 0 nothing in common.</p>`,
  );
  return parts.join('');
}

function problems(r: Report): string {
  if (!r.problems.length && !r.conflicts) return '';
  const items = r.problems.slice(0, 50).map((p) => `<li>${esc(`${p.file}:${p.line}: ${p.kind}: ${p.message}`)}</li>`);
  const more = r.problems.length > 50 ? `<li>… and ${r.problems.length - 50} more</li>` : '';
  const conflicts = r.conflicts ? `<li>${r.conflicts} record(s) with the same id and revision but different content (the first read was kept)</li>` : '';
  return `<details class="problems"><summary>${r.problems.length} line(s) skipped${r.conflicts ? `, ${r.conflicts} conflict(s)` : ''}</summary><ul>${items.join('')}${more}${conflicts}</ul></details>`;
}

function heatmap(r: Report): string {
  const head = `<tr><th>bug</th><th>tier</th>${r.groups.map((g) => `<th>${esc(g.id)}</th>`).join('')}</tr>`;
  const rows = r.bugs.map((b) => {
    const cells = r.groups.map((g) => {
      const s = r.cells.find((c) => c.scope === 'bug' && c.bugId === b.id && c.group === g.id)?.summary;
      return s ? `<td class="heat h${Math.round(s.rate * 10)}" title="${esc(`95% CI ${pct(s.ci[0])}–${pct(s.ci[1])}`)}">${esc(cellText(s))}</td>` : `<td class="heat none">–</td>`;
    });
    return `<tr><th title="${esc(b.title ?? '')}">${esc(b.id)}</th><td>${b.tier ?? ''}</td>${cells.join('')}</tr>`;
  });
  return `<table class="grid heatmap">${head}${rows.join('')}</table>`;
}

function summaryTable(rows: [string, Summary][]): string {
  return table(
    ['group', 'pass rate', '95% CI', 'time to fix', 'submissions', 'patch lines', 'similarity', 'tokens', 'cost', 'total cost', 'gave up', 'timed out', 'hints', 'from edits'],
    rows.map(([g, s]) => [
      g,
      rateText(s),
      `${pct(s.ci[0])}–${pct(s.ci[1])}`,
      minutes(s.timeToFixMs.median),
      num(s.submissions, 1),
      num(s.patchLines, 0),
      num(s.similarity, 2),
      s.tokens === null ? '' : Math.round(s.tokens).toLocaleString('en'),
      s.costUsd === null ? '' : `$${s.costUsd.toFixed(3)}`,
      s.costUsd === null ? '' : `$${s.totalCostUsd.toFixed(2)}`,
      String(s.gaveUp),
      String(s.timedOut),
      num(s.hints, 1),
      String(s.fromEdits),
    ]),
  );
}

/**
 * The efficiency lift (what the context changes on runs solved in both conditions) and
 * the asymmetry view: models by baseline strength with their rate and efficiency lifts.
 */
function efficiencySection(r: Report): string {
  const solved = r.efficiency.perModel.filter((e) => e.solvedBoth > 0);
  const parts: string[] = [];
  if (solved.length) {
    const change = (c: (typeof solved)[number]['solved']['steps'], fmt: (v: number) => string) => (c === null ? '–' : `${c.meanChange >= 0 ? '+' : ''}${fmt(c.meanChange)} (${fmt(c.ci[0])} … ${fmt(c.ci[1])})`);
    parts.push(
      `<h2>Efficiency lift</h2><p class="meta">On runs solved in both conditions (paired by bug and repeat): context-augmented minus symptom-only, mean change with a 95% percentile bootstrap interval (${r.efficiency.resamples} resamples, seed ${r.efficiency.seed}). Negative is cheaper with the context.</p>`,
      table(
        ['model', 'pairs solved in both', 'steps', 'tokens', 'cost', 'time to fix (min)', 'unsolved in both: steps'],
        r.efficiency.perModel.map((e) => [e.model, String(e.solvedBoth), change(e.solved.steps, (v) => v.toFixed(1)), change(e.solved.tokens, (v) => String(Math.round(v))), change(e.solved.costUsd, (v) => `$${v.toFixed(3)}`), change(e.solved.timeToFixMs, (v) => (v / 60_000).toFixed(1)), `${change(e.unsolved.steps, (v) => v.toFixed(1))} (${e.unsolvedBoth})`]),
      ),
    );
  }
  const a = r.asymmetry;
  if (a.models.length >= 2) {
    const corr = (c: Report['asymmetry']['rateLift']) => (c === null ? 'n/a (fewer than three models with figures)' : `${c.rho.toFixed(2)}${c.ci ? ` (95% CI ${c.ci[0].toFixed(2)} … ${c.ci[1].toFixed(2)})` : ' (interval needs four models)'} over ${c.n} models`);
    parts.push(
      `<h2>Rate against efficiency</h2><p class="meta">Models from weakest to strongest symptom-only pass rate. The paper found that context lifts weaker models' pass rate and stronger models' efficiency: a negative rank correlation of strength with the rate lift and a positive one with the steps saved. Spearman's rho, baseline against rate lift: ${esc(corr(a.rateLift))}; against steps saved: ${esc(corr(a.efficiencyLift))}.</p>`,
      dotChart('Pass-rate lift by model, weakest first (percentage points)', a.models.map((m) => ({ label: `${m.model} (${pct(m.symptomOnlyRate)})`, value: m.rateLift, cls: 'dot', note: signedPp(m.rateLift) })), (v) => `${v > 0 ? '+' : ''}${Math.round(v * 100)}`),
      dotChart('Steps saved on runs solved in both, weakest first (% of the symptom-only steps)', a.models.filter((m) => m.efficiencyLift !== null).map((m) => ({ label: `${m.model} (${pct(m.symptomOnlyRate)})`, value: m.efficiencyLift!, cls: 'dot', note: pct(m.efficiencyLift!) })), (v) => `${Math.round(v * 100)}%`),
      table(
        ['model', 'symptom-only pass rate', 'rate lift', 'steps saved'],
        a.models.map((m) => [m.model, pct(m.symptomOnlyRate), signedPp(m.rateLift), m.efficiencyLift === null ? '–' : pct(m.efficiencyLift)]),
      ),
    );
  }
  return parts.join('');
}

/** Each twin pair: the miniature against the real code, per group and pooled: pass rates, then what a fix cost on each. */
function twinsSection(r: Report): string {
  if (!r.twins.length) return '';
  const arrow = (a: string, b: string) => (a || b ? `${a || '–'} → ${b || '–'}` : '–');
  const round = (v: number | null, f: (x: number) => string) => (v === null ? '' : f(v));
  return [
    `<h2>Twins: the miniature and the real code</h2><p class="meta">A miniature and a bug in the real upstream code that re-create the same upstream mechanism. Difference: the real code's pass rate minus the miniature's, 95% Newcombe interval. Paired: one attempt on each, by repeat for an agent and by participant for people, solved on both / only the miniature / only the real code / neither, with McNemar's exact p on the pairs that differ. Then, miniature → real code: median time to fix, mean steps and tokens.</p>`,
    ...r.twins.map((t) =>
      [
        `<p><strong>${esc(t.miniature)}</strong> (miniature) and <strong>${esc(t.upstream)}</strong> (real code)</p>`,
        table(
          ['group', 'miniature', 'real code', 'difference', '95% CI', 'paired', 'McNemar p'],
          t.groups.map((g) => [g.group, rateText(g.miniature), rateText(g.upstream), signedPp(g.difference), `${signedPp(g.ci[0])} … ${signedPp(g.ci[1])}`, `${g.agreement.both} / ${g.agreement.miniatureOnly} / ${g.agreement.upstreamOnly} / ${g.agreement.neither} of ${g.agreement.pairs}`, pValue(g.agreement.p)]),
        ),
        table(
          ['group', 'time to fix', 'steps', 'tokens'],
          t.groups.map((g) => [
            g.group,
            arrow(minutes(g.miniature.medianTimeToFixMs), minutes(g.upstream.medianTimeToFixMs)),
            arrow(round(g.miniature.meanSteps, (v) => v.toFixed(1)), round(g.upstream.meanSteps, (v) => v.toFixed(1))),
            arrow(round(g.miniature.meanTokens, (v) => Math.round(v).toLocaleString('en')), round(g.upstream.meanTokens, (v) => Math.round(v).toLocaleString('en'))),
          ]),
        ),
      ].join(''),
    ),
  ].join('');
}

function provenance(r: Report): string {
  const p = r.provenance;
  if (p === undefined) return '';
  const study = p.study ? `Study ${esc(p.study.name)} (${esc(p.study.hash)}); ` : 'No study file; ';
  return `<p class="meta">${study}ddbench ${esc(p.toolVersion)}${p.bugSetHash ? `, bug set ${esc(p.bugSetHash)}` : ''}; ${esc(p.environment)}.</p>`;
}

function pValue(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return `<table class="grid"><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</table>`;
}

function rateRow(g: GroupRef, s: Summary): IntervalRow {
  return { label: g.id, value: s.rate, ci: s.ci, cls: groupClass(g), note: rateText(s) };
}

function groupClass(g: GroupRef): string {
  return g.id === PEOPLE ? 'bar-people' : g.condition === 'context-augmented' ? 'bar-context' : 'bar-symptom';
}

function cellOf(cells: readonly Cell[], scope: Cell['scope'], group: string): Summary | undefined {
  return cells.find((c) => c.scope === scope && c.group === group)?.summary;
}

function cellText(s: Summary | undefined): string {
  return s ? rateText(s) : '–';
}

function rateText(s: { rate: number; passed: number; n: number }): string {
  return `${pct(s.rate)} (${s.passed}/${s.n})`;
}

function pct(v: number): string {
  return `${Math.round(v * 100)}%`;
}

function signedPp(v: number): string {
  const pp = v * 100;
  return `${pp > 0 ? '+' : pp < 0 ? '−' : '±'}${Math.abs(pp).toFixed(1)} pp`;
}

function minutes(ms: number | null): string {
  if (ms === null) return '';
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

function num(v: number | null, digits: number): string {
  return v === null ? '' : v.toFixed(digits);
}

function niceMax(v: number): number {
  const step = 10 ** Math.floor(Math.log10(v));
  return Math.ceil(v / step) * step;
}

/** The standalone page's colours; the webview sets the same variables from the VS Code theme. */
const PAGE_COLOURS = `:root{--fg:#1f2328;--bg:#fff;--muted:#656d76;--line:#d0d7de;--people:#8250df;--symptom:#0969da;--context:#1a7f37;--agents:#bf8700;--heat:9,105,218}
@media (prefers-color-scheme: dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8d96a0;--line:#30363d;--people:#a371f7;--symptom:#4493f8;--context:#3fb950;--agents:#d29922;--heat:68,147,248}}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}`;

/** Layout and chart styles shared by the page and the webview (no colours of its own but the variables). */
export const REPORT_CSS = `
.ddbench-report{max-width:1100px;margin:0 auto;padding:16px 24px}
.ddbench-report h1{font-size:1.5em;margin:.2em 0}.ddbench-report h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
.ddbench-report .meta{color:var(--muted)}
.ddbench-report table.grid{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums;display:block;max-width:100%;overflow-x:auto}
.ddbench-report table.grid th,.ddbench-report table.grid td{border:1px solid var(--line);padding:3px 8px;text-align:left;white-space:nowrap}
.ddbench-report figure.chart{margin:.8em 0}.ddbench-report figcaption{font-weight:600;margin-bottom:.3em}
.ddbench-report svg text{fill:var(--fg);font-size:12px}.ddbench-report svg .tick,.ddbench-report svg .note{fill:var(--muted)}
.ddbench-report svg .grid{stroke:var(--line);stroke-width:1}.ddbench-report svg .zero{stroke:var(--muted);stroke-width:1.5}
.ddbench-report svg .ci{stroke:var(--fg);stroke-width:1.5;fill:none}
.ddbench-report .bar-people{fill:var(--people)}.ddbench-report .bar-symptom{fill:var(--symptom)}.ddbench-report .bar-context{fill:var(--context)}.ddbench-report .bar-agents{fill:var(--agents)}
.ddbench-report .dot{fill:var(--context)}.ddbench-report .dot-all{fill:var(--fg)}
.ddbench-report td.heat{text-align:center}.ddbench-report td.none{color:var(--muted)}
${Array.from({ length: 11 }, (_, i) => `.ddbench-report td.h${i}{background:rgba(var(--heat),${(i / 10) * 0.55})}`).join('')}
.ddbench-report details.problems{border:1px solid var(--line);padding:4px 8px;margin:.5em 0}
`;
