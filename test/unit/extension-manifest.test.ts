// Keeps package.json's contributions and the extension's typed tables in step. The
// other direction, "every table entry is registered", is enforced by the compiler:
// extension.ts registers a `Record<CommandName, Handler>`.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { COMMAND_CATEGORY, COMMANDS, CONTEXT_KEYS, CONTEXT_VALUES, VIEWS, WALKTHROUGH_KEYS } from '../../src/extension/commands';
import { SETTINGS } from '../../src/extension/settings';
import { STUDY_SETTINGS } from '../../src/extension/studySettings';

const root = path.resolve(__dirname, '..', '..');

const MenuEntry = z.object({ command: z.string(), when: z.string().optional(), group: z.string().optional() });
const Manifest = z.object({
  main: z.string(),
  icon: z.string(),
  engines: z.object({ vscode: z.string() }),
  activationEvents: z.array(z.string()).default([]),
  contributes: z.object({
    commands: z.array(z.object({ command: z.string(), title: z.string(), category: z.string().optional(), icon: z.string().optional() })),
    viewsContainers: z.object({ activitybar: z.array(z.object({ id: z.string(), title: z.string(), icon: z.string() })) }),
    views: z.record(z.string(), z.array(z.object({ id: z.string(), name: z.string(), icon: z.string().optional() }))),
    viewsWelcome: z.array(z.object({ view: z.string(), contents: z.string(), when: z.string().optional() })).default([]),
    menus: z.record(z.string(), z.array(MenuEntry)).default({}),
    configuration: z.object({ properties: z.record(z.string(), z.unknown()) }),
    walkthroughs: z
      .array(
        z.object({
          id: z.string(),
          title: z.string(),
          steps: z.array(z.object({ id: z.string(), title: z.string(), description: z.string(), media: z.object({ markdown: z.string() }), completionEvents: z.array(z.string()) })),
        }),
      )
      .default([]),
  }),
});

const manifest = Manifest.parse(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')));
const { contributes } = manifest;
const tableIds = Object.values(COMMANDS).map((c) => c.id);
const declaredIds = contributes.commands.map((c) => c.command);
const allMenuEntries = Object.values(contributes.menus).flat();
const allWhens = [
  ...allMenuEntries.map((m) => m.when),
  ...contributes.viewsWelcome.map((w) => w.when),
].filter((w): w is string => w !== undefined);

describe('extension manifest (package.json) vs src/extension tables', () => {
  it('has an icon, and the VSIX ships it and the walkthrough pages', () => {
    assert.ok(fs.existsSync(path.join(root, manifest.icon)), manifest.icon);
    const shipped = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
    assert.match(shipped, /^!media\/\*\*\/\*\.\{[^}]*\bpng\b[^}]*\bmd\b[^}]*\}$/m, 'media PNGs and Markdown go into the VSIX');
  });

  it('walks a newcomer from the first bug to a verified fix; each step has its page, buttons that exist, and completes on a real outcome', () => {
    const walk = contributes.walkthroughs.find((w) => w.id === 'gettingStarted');
    assert.ok(walk, 'the Get Started walkthrough');
    const known: string[] = [...Object.values(WALKTHROUGH_KEYS), ...Object.values(CONTEXT_KEYS)];
    for (const step of walk.steps) {
      assert.ok(fs.existsSync(path.join(root, step.media.markdown)), `${step.id}: ${step.media.markdown}`);
      for (const [, id] of step.description.matchAll(/\(command:([\w.]+)\)/g)) assert.ok(declaredIds.includes(id!), `${step.id}: unknown command ${id}`);
      for (const event of step.completionEvents) {
        const [kind, what] = event.split(':');
        if (kind === 'onContext') assert.ok(known.includes(what!), `${step.id}: unknown context key ${what}`);
        else assert.ok(kind === 'onCommand' && declaredIds.includes(what!), `${step.id}: ${event}`);
      }
    }
    assert.deepEqual(walk.steps.map((s) => s.id), ['pick', 'issue', 'launch', 'request', 'timeline', 'repro', 'trial', 'hint', 'verify']);
  });

  it('declares every command of the table, once', () => {
    const missing = tableIds.filter((id) => !declaredIds.includes(id));
    assert.deepEqual(missing, [], 'commands in src/extension/commands.ts but not in contributes.commands');
    assert.equal(new Set(declaredIds).size, declaredIds.length, 'a command is declared twice');
  });

  it('declares no command the extension does not register', () => {
    const extra = declaredIds.filter((id) => !tableIds.includes(id as (typeof tableIds)[number]));
    assert.deepEqual(extra, [], 'commands in contributes.commands but not in src/extension/commands.ts');
  });

  it('gives each command the title, category and icon of the table', () => {
    for (const spec of Object.values(COMMANDS)) {
      const declared = contributes.commands.find((c) => c.command === spec.id);
      assert.ok(declared, spec.id);
      assert.equal(declared.title, spec.title, `${spec.id} title`);
      assert.equal(declared.category, COMMAND_CATEGORY, `${spec.id} category`);
      assert.equal(declared.icon, spec.icon, `${spec.id} icon`);
    }
  });

  it('references only known commands in menus and welcome views', () => {
    const fromMenus = allMenuEntries.map((m) => m.command);
    const fromWelcome = contributes.viewsWelcome.flatMap((w) => [...w.contents.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1] ?? ''));
    const unknown = [...fromMenus, ...fromWelcome].filter((id) => !tableIds.includes(id as (typeof tableIds)[number]));
    assert.deepEqual(unknown, []);
  });

  it('declares the activity-bar container and its views, with icons that exist', () => {
    const container = contributes.viewsContainers.activitybar.find((c) => c.id === VIEWS.container);
    assert.ok(container, `activity-bar container ${VIEWS.container}`);
    assert.ok(fs.existsSync(path.join(root, container.icon)), `icon ${container.icon}`);
    const views = (contributes.views[VIEWS.container] ?? []).map((v) => v.id);
    assert.deepEqual(views.sort(), [VIEWS.bugs, VIEWS.cluster, VIEWS.seeds].sort());
    for (const w of contributes.viewsWelcome) assert.ok(views.includes(w.view), `welcome view for unknown view ${w.view}`);
  });

  it('uses only known view ids, context keys and context values in when clauses', () => {
    const known = new Set<string>([...Object.values(VIEWS), ...Object.values(CONTEXT_KEYS), CONTEXT_VALUES.bug, CONTEXT_VALUES.system, CONTEXT_VALUES.seed]);
    const used = allWhens.flatMap((w) => [...w.matchAll(/(?<![\\\w])ddbench\.[A-Za-z]+(?![\\\w])/g)].map((m) => m[0]));
    assert.deepEqual(used.filter((k) => !known.has(k)), []);
    for (const key of Object.values(CONTEXT_KEYS)) assert.ok(used.includes(key), `context key ${key} is set but never used`);
  });

  it('declares exactly the settings the extension reads', () => {
    assert.deepEqual(Object.keys(contributes.configuration.properties).sort(), [...Object.values(SETTINGS), ...Object.values(STUDY_SETTINGS)].sort());
  });

  it('activates lazily: no "*" and no events VS Code 1.100 generates itself', () => {
    assert.match(manifest.engines.vscode, /^\^1\.(\d+)\./);
    for (const event of manifest.activationEvents) {
      assert.notEqual(event, '*');
      assert.doesNotMatch(event, /^(onCommand|onView):/, `${event} is implicit for contributed commands and views`);
    }
  });

  it('points main at the esbuild bundle', () => {
    assert.equal(manifest.main, './dist/extension.js');
  });
});
