// The layers of src/ and what each may import; `npm run lint` enforces them.
// Order, bottom to top: runtime → events, patch, sandbox → bugs → cluster → scenario →
// {repro, sim} → verify → {agent, study} → timeline, with extension and cli on top.
// Folders of one rank never import each other, so no cycle between folders can form.
const core = (folder) => `^src/core/${folder}/`;
const layers = [
  { name: 'runtime', path: '^src/runtime/', may: ['runtime'] },
  { name: 'core-base', path: '^src/core/[^/]+$', may: ['core-base'] },
  { name: 'events', path: core('events'), may: ['core-base', 'runtime', 'events'] },
  { name: 'patch', path: core('patch'), may: ['core-base', 'patch'] },
  { name: 'sandbox', path: core('sandbox'), may: ['core-base', 'sandbox'] },
  { name: 'bugs', path: core('bugs'), may: ['core-base', 'runtime', 'events', 'patch', 'bugs'] },
  { name: 'cluster', path: core('cluster'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster'] },
  { name: 'scenario', path: core('scenario'), may: ['core-base', 'sandbox', 'runtime', 'events', 'bugs', 'cluster', 'scenario'] },
  { name: 'repro', path: core('repro'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'repro'] },
  { name: 'sim', path: core('sim'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'sim'] },
  { name: 'verify', path: core('verify'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'repro', 'sim', 'verify'] },
  { name: 'agent', path: core('agent'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'repro', 'sim', 'verify', 'agent'] },
  { name: 'study', path: core('study'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'repro', 'sim', 'verify', 'agent', 'study'] },
  { name: 'timeline', path: core('timeline'), may: ['core-base', 'sandbox', 'runtime', 'events', 'patch', 'bugs', 'cluster', 'scenario', 'repro', 'sim', 'verify', 'agent', 'study', 'timeline'] },
  { name: 'extension', path: '^src/extension/', may: ['core', 'runtime', 'extension'] },
  { name: 'cli', path: '^src/cli/', may: ['core', 'runtime', 'cli'] },
  // Webviews run in a browser: they may use core's message protocols and pure models, never Node's modules (checked by the browser build).
  { name: 'media', path: '^media/', may: ['core', 'media'] },
];
const pathOf = (name) => (name === 'core' ? '^src/core/' : layers.find((l) => l.name === name).path);

module.exports = {
  forbidden: [
    {
      name: 'vscode-only-in-extension',
      comment: 'Only src/extension may import vscode: core runs in plain Node (the CLI, tests, workers).',
      severity: 'error',
      from: { pathNot: '^src/extension/' },
      to: { path: '^vscode$' },
    },
    {
      name: 'no-circular',
      comment: 'Modules import each other in a cycle.',
      severity: 'error',
      from: { path: '^(src|media)/' },
      to: { circular: true },
    },
    ...layers.map((l) => ({
      name: `layer-${l.name}`,
      comment: `${l.name} may import only ${l.may.join(', ')} (see docs/architecture.md).`,
      severity: 'error',
      from: { path: l.path },
      to: { path: '^(src|media)/', pathNot: l.may.map(pathOf) },
    })),
    {
      name: 'not-to-tests',
      comment: 'Shipped code never imports tests or benchmarks.',
      severity: 'error',
      from: { path: '^(src|media)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
