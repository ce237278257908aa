import type { Catalog } from './catalog';

/** The README's bug table (Markdown): id, system and its upstream project, upstream bug with its address, the upstream fix's status linked to the fix, tier, the faults its failing run injects, categories. */
export function bugTableMarkdown(catalog: Catalog): string {
  // A real upstream system is named by its release: "etcd (real etcd 3.4.23)".
  const projectOf = new Map(catalog.systems.map((s) => [s.id, s.manifest.upstream ? `real ${s.manifest.modelledAfter.project} ${s.manifest.upstream.version}` : s.manifest.modelledAfter.project]));
  const rows = catalog.bugs.map((b) => {
    const system = projectOf.has(b.system) ? `${b.system} (${projectOf.get(b.system)})` : b.system;
    return `| ${b.id} | ${system} | [${b.modelledAfter.id}](${b.modelledAfter.url}) | [${b.modelledAfter.status}](${b.modelledAfter.fix.url}) | ${b.tier} | ${b.manifest.faults.join(', ') || 'none'} | ${b.categories.join(', ')} |`;
  });
  return ['| bug | system | upstream | fix | tier | faults | categories |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The README's systems table (Markdown): id, the upstream project it is modelled after (or is, for a real one), its description. */
export function systemTableMarkdown(catalog: Catalog): string {
  const rows = catalog.systems.map((s) => {
    const bugs = catalog.bugs.filter((b) => b.system === s.id).length;
    return `| ${s.id} | [${s.manifest.modelledAfter.project}](${s.manifest.modelledAfter.url}) | ${bugs} | ${s.manifest.description.replace(/\|/g, '\\|')} |`;
  });
  return ['| system | modelled after | bugs | what it is |', '|---|---|---|---|', ...rows].join('\n');
}
