import * as vscode from 'vscode';
import { z } from 'zod';
import type { NodeInfo, NodeStatus } from '../core/cluster/types';
import { UserError } from '../core/errors';
import type { ClusterSession } from './clusterSession';

/** A node action's argument: a Cluster view item (a NodeInfo) or a node id. */
const NodeArg = z.union([z.string().min(1), z.object({ id: z.string().min(1) })]);

/** The node an action applies to: the argument, else a pick among nodes in a fitting state. */
/** The node id in a command's argument: a node id, or a Cluster view item. */
export function nodeIdOf(arg: unknown, action: string): string {
  const parsed = NodeArg.safeParse(arg);
  if (!parsed.success) throw new Error(`${action} expects a node id or a Cluster view item`);
  return typeof parsed.data === 'string' ? parsed.data : parsed.data.id;
}

export async function resolveNode(
  session: ClusterSession,
  arg: unknown,
  action: string,
  fits: (s: NodeStatus) => boolean,
): Promise<NodeInfo | undefined> {
  const nodes = session.nodes();
  if (!session.running) throw new UserError('no cluster is running; launch one first');
  if (arg !== undefined) {
    const id = nodeIdOf(arg, action);
    const node = nodes.find((n) => n.id === id);
    if (!node) throw new UserError(`no node "${id}" in the running cluster (nodes: ${nodes.map((n) => n.id).join(', ')})`);
    return node;
  }
  const candidates = nodes.filter((n) => fits(n.status));
  if (candidates.length === 0) throw new UserError(`no node can be asked to ${action.toLowerCase()} right now`);
  const picked = await vscode.window.showQuickPick(
    candidates.map((n) => ({ label: n.id, description: n.status, node: n })),
    { title: `DDBench: ${action}`, placeHolder: 'Pick a node' },
  );
  return picked?.node;
}

/** Asks which nodes to cut off; the rest stay connected to each other. */
export async function pickIsolated(session: ClusterSession, arg: unknown): Promise<string[] | undefined> {
  const nodes = session.nodes();
  if (!session.running) throw new UserError('no cluster is running; launch one first');
  const preselected = NodeArg.safeParse(arg);
  const preId = preselected.success ? (typeof preselected.data === 'string' ? preselected.data : preselected.data.id) : undefined;
  const picked = await vscode.window.showQuickPick(
    nodes.map((n) => ({ label: n.id, description: n.status, picked: n.id === preId })),
    { title: 'DDBench: Partition', placeHolder: 'Isolate which nodes? The others stay connected to each other.', canPickMany: true },
  );
  if (!picked) return undefined;
  if (picked.length === 0 || picked.length === nodes.length) {
    throw new UserError('pick at least one node and leave at least one on the other side of the partition');
  }
  return picked.map((p) => p.label);
}

export async function attachDebugger(node: NodeInfo): Promise<void> {
  if (node.inspectPort === undefined) {
    throw new UserError(`${node.id} has no inspector port; enable the ddbench.cluster.inspect setting and relaunch the cluster`);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  const started = await vscode.debug.startDebugging(folder, {
    type: 'node',
    request: 'attach',
    name: `DDBench: ${node.id}`,
    address: '127.0.0.1',
    port: node.inspectPort,
    skipFiles: ['<node_internals>/**'],
  });
  if (!started) throw new UserError(`could not attach the debugger to ${node.id} on port ${node.inspectPort}`);
}
