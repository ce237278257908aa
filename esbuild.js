// Bundles the extension, the CLI, the sandboxed simulation child and its workers, and the node runtime host for Node, and the webviews for the browser.
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

// ssh2 (through dockerode) is bundled; its optional native parts (loaded in try/catch) stay out, so the VSIX needs no node_modules.
const nodeExternals = ['cpu-features', '*.node'];

// Only the extension bundle may leave `vscode` to its host: anywhere else an import of it must fail the build.
const nodeBuilds = [
  { entryPoints: { extension: 'src/extension/extension.ts' }, outdir: 'dist', external: ['vscode'] },
  { entryPoints: { cli: 'src/cli/main.ts' }, outdir: 'dist' },
  { entryPoints: { 'sim-child': 'src/core/sim/child-entry.ts', 'sim-worker': 'src/core/sim/worker-entry.ts' }, outdir: 'dist' },
  { entryPoints: { 'runtime/live-host': 'src/runtime/live-host.ts' }, outdir: 'dist' },
];

function webviewEntries() {
  const dir = path.join(__dirname, 'media');
  if (!fs.existsSync(dir)) return {};
  const entries = {};
  for (const name of fs.readdirSync(dir)) {
    const main = path.join(dir, name, 'main.ts');
    if (fs.existsSync(main)) entries[`media/${name}`] = main;
  }
  return entries;
}

/**
 * zod's `z` namespace re-exports every locale (~380 kB); webviews only ever show
 * English messages, so the locales module is replaced by English alone there.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}zod${path.sep}`) ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-en' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: "export { default as en } from './en.js';", loader: 'js', resolveDir: path.dirname(args.path) }));
  },
};

async function main() {
  const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };
  const configs = nodeBuilds
    .filter((b) => Object.values(b.entryPoints).every((p) => fs.existsSync(p)))
    .map(({ external = [], ...b }) => ({ ...common, ...b, platform: 'node', format: 'cjs', target: 'node20', external: [...nodeExternals, ...external] }));
  const web = webviewEntries();
  if (Object.keys(web).length > 0) {
    // Always minified: a webview (and the HTML export, which inlines it) parses the whole bundle before its first paint.
    configs.push({ ...common, minify: true, entryPoints: web, outdir: 'dist', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] });
  }
  if (watch) {
    for (const c of configs) await (await esbuild.context(c)).watch();
    return;
  }
  await Promise.all(configs.map((c) => esbuild.build(c)));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
