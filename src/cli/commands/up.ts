import { Option } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { findBug, loadCatalog } from '../../core/bugs/catalog';
import { defaultWorkspacesDir, isWorkspace, openWorkspace, readWorkspace } from '../../core/bugs/workspace';
import { UserError } from '../../core/errors';
import { cancelOnSignals } from '../../core/interrupt';
import { formatEvent } from '../../core/repro/evidence';
import { launchWorkspaceCluster } from '../../core/cluster/launch';
import { clusterBackendOptions, optionGroup, options, trialOptions, type OptionsOf } from '../options';
import { EXIT, progress, say } from '../output';

export const upOptions = options(
  trialOptions({ seed: 'seed for the nodes and router' }),
  optionGroup(
    [new Option('--inspect', 'start each node with the Node.js inspector on a free port'), new Option('--quiet', 'do not print live events')],
    z.object({ inspect: z.boolean().optional(), quiet: z.boolean().optional() }),
  ),
  clusterBackendOptions,
);

/** A workspace folder as given, or the default workspace of a bug id (opened when missing). */
export async function workspaceFor(target: string): Promise<string> {
  if (fs.existsSync(target)) {
    if (!isWorkspace(target)) throw new UserError(`${path.resolve(target)} is not a DDBench workspace; give a bug id or a folder made by \`ddbench open\``);
    return path.resolve(target);
  }
  const catalog = await loadCatalog();
  const bug = findBug(catalog, target);
  const dir = path.join(defaultWorkspacesDir(), bug.id);
  if (isWorkspace(dir) && (await readWorkspace(dir)).bugId === bug.id) return dir;
  return openWorkspace(catalog, bug.id, dir);
}

export async function commandUp(target: string, o: OptionsOf<typeof upOptions>): Promise<number> {
  const dir = await workspaceFor(target);
  progress(`launching the cluster of ${dir} …`);
  const cluster = await launchWorkspaceCluster(dir, { seed: o.seed, inspect: o.inspect, backend: o.backend });
  for (const n of cluster.nodes()) {
    say(`  ${n.id.padEnd(6)} ${n.status.padEnd(8)} ${n.container ? `container ${n.container}` : `pid ${n.pid ?? '-'}`}${n.statePort ? `  state http://127.0.0.1:${n.statePort}/state` : ''}${n.inspectPort ? `  inspector 127.0.0.1:${n.inspectPort}` : ''}`);
  }
  say(`events: ${path.join(cluster.runDir, 'events.jsonl')}`);
  say('Ctrl-C stops the cluster.\n');
  if (!o.quiet) cluster.onEvent((e) => say(formatEvent(e)));
  // Ctrl-C is how `up` ends, so it exits 0; a second one quits at once (the nodes are still killed).
  const cancel = cancelOnSignals();
  try {
    await new Promise<void>((resolve) => cancel.signal.addEventListener('abort', () => resolve(), { once: true }));
    progress('\nstopping … (Ctrl-C again to quit at once)');
    await cluster.stop();
  } finally {
    cancel.dispose();
  }
  progress('stopped; no node is left running.');
  return EXIT.ok;
}
