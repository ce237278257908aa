import { Option } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { z } from 'zod';
import { findBug, loadCatalog } from '../../core/bugs/catalog';
import { defaultWorkspacesDir, isWorkspace, openWorkspace, readWorkspace, resolveWorkspace } from '../../core/bugs/workspace';
import type { ClientOperation } from '../../core/bugs/manifest';
import { argsLine, requestTemplate, RequestConsole } from '../../core/cluster/requests';
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
  const { system } = await resolveWorkspace(dir);
  const requests = new RequestConsole(cluster, system.manifest.client, system.manifest.nodes);
  say(`Type a request and Enter: <node> <operation> field=value …, e.g. ${system.manifest.client[0] ? requestTemplate(system.manifest.client[0], system.manifest.nodes[0] ?? 'n1') : 'n1 Status'} ("help" lists the operations).`);
  say('Ctrl-C stops the cluster.\n');
  if (!o.quiet) cluster.onEvent((e) => say(formatEvent(e)));
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  lines.on('line', (line) => void answer(requests, system.manifest.client, line));
  // Ctrl-C is how `up` ends, so it exits 0; a second one quits at once (the nodes are still killed).
  const cancel = cancelOnSignals();
  try {
    await new Promise<void>((resolve) => cancel.signal.addEventListener('abort', () => resolve(), { once: true }));
    progress('\nstopping … (Ctrl-C again to quit at once)');
    lines.close();
    requests.close();
    await cluster.stop();
  } finally {
    cancel.dispose();
  }
  progress('stopped; no node is left running.');
  return EXIT.ok;
}

/** One typed request: the operations for "help", else the reply (or why nothing was sent). */
async function answer(requests: RequestConsole, ops: readonly ClientOperation[], line: string): Promise<void> {
  if (!line.trim()) return;
  if (/^(help|\?)$/i.test(line.trim())) {
    for (const op of ops) say(`  ${op.type.padEnd(22)} ${argsLine(op) || '(no fields)'}  — ${op.doc}${op.to ? ` (to ${op.to})` : ''}`);
    return;
  }
  try {
    const r = await requests.send(line);
    say(r.error === undefined ? `← ${r.request.node} ${r.request.type} (${r.ms} ms): ${JSON.stringify(r.reply)}` : `← ${r.request.node} ${r.request.type}: no reply (${r.error})`);
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    say(`request not sent: ${err.message}`);
  }
}
