import * as vscode from 'vscode';
import type { Catalog } from '../core/bugs/catalog';
import { findSystem } from '../core/bugs/catalog';
import type { ClientOperation } from '../core/bugs/manifest';
import { argsLine, requestTemplate, RequestConsole } from '../core/cluster/requests';
import { describeLinkFault, faultEffect, type FaultEffect } from '../core/cluster/link-faults';
import type { LinkFault, NodeInfo } from '../core/cluster/types';
import { UserError } from '../core/errors';
import type { ClusterSession } from './clusterSession';
import { nodeIdOf } from './nodeActions';
import { completeStep } from './walkthrough';

const HISTORY_KEY = 'ddbench.requestHistory';
const HISTORY = 20;

/**
 * Talking to the running cluster from the editor: a request console (the system's client
 * operations from system.json, offered as completions; replies in the output; each
 * request a message on the timeline), and link faults between two nodes (one-way or
 * both ways, delay, drop or duplicate, for one message type or all) — what a tier-1 bug
 * needs to show. Node state and logs open through NodeDocuments.
 */
export class ClusterConsole implements vscode.Disposable {
  private console: { cluster: unknown; requests: RequestConsole } | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly session: ClusterSession,
    private readonly catalog: () => Promise<Catalog>,
    private readonly output: vscode.OutputChannel,
    private readonly memento: vscode.Memento,
  ) {
    // A stopped cluster's client goes with it.
    this.subscription = session.onDidChange(() => {
      if (this.console && this.console.cluster !== session.running?.cluster) this.closeConsole();
    });
  }

  /** Asks for a request (completing the system's operations), sends it and shows the reply. */
  async sendRequest(arg?: unknown): Promise<void> {
    const running = this.requireRunning();
    const system = findSystem(await this.catalog(), running.workspace.system);
    const ops = system.manifest.client;
    if (ops.length === 0) throw new UserError(`${system.id} declares no client operations (system.json "client")`);
    const node = arg === undefined ? undefined : nodeIdOf(arg, 'Send a Request');
    const line = await this.askRequest(ops, system.manifest.nodes, node ?? this.firstRunning() ?? system.manifest.nodes[0]!);
    if (line === undefined) return;
    const requests = this.requests(ops, system.manifest.nodes);
    const outcome = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `DDBench: ${line}` }, () => requests.send(line));
    await this.remember(line);
    const reply = outcome.error === undefined ? JSON.stringify(outcome.reply) : `no reply (${outcome.error})`;
    this.output.appendLine(`[request] → ${outcome.request.node} ${outcome.request.type} ${JSON.stringify(outcome.request.body)}`);
    this.output.appendLine(`[request] ← ${reply} (${outcome.ms} ms)`);
    completeStep('requestSent');
    const again = 'Send Another';
    const choice = await vscode.window.showInformationMessage(`${outcome.request.node} ${outcome.request.type} → ${reply.length > 300 ? `${reply.slice(0, 299)}…` : reply}`, again, 'Show Output');
    if (choice === again) await this.sendRequest(outcome.request.node);
    else if (choice === 'Show Output') this.output.show(true);
  }

  /** A link fault between two nodes, asked for step by step. */
  async addLinkFault(arg?: unknown): Promise<void> {
    const running = this.requireRunning();
    const nodes = running.cluster.nodes().map((n) => n.id);
    const from = arg === undefined ? await pickNode(nodes, 'Messages from which node?') : nodeIdOf(arg, 'Add Link Fault');
    if (!from) return;
    const to = await pickNode(['*', ...nodes.filter((n) => n !== from)], `Messages from ${from} to which node? (* every node)`);
    if (!to) return;
    const direction = await vscode.window.showQuickPick(
      [
        { label: `One way: ${from} → ${to}`, both: false },
        { label: `Both ways: ${from} ↔ ${to}`, both: true },
      ],
      { title: 'Which direction?' },
    );
    if (!direction) return;
    const kind = await vscode.window.showQuickPick(
      [
        { label: 'Delay', detail: 'hold each message for a while (a slow link)', effect: 'delay' as const },
        { label: 'Drop', detail: 'lose a share of the messages', effect: 'drop' as const },
        { label: 'Duplicate', detail: 'deliver a share of the messages twice', effect: 'duplicate' as const },
      ],
      { title: 'What happens to the messages?' },
    );
    if (!kind) return;
    const amount = await vscode.window.showInputBox({
      title: kind.effect === 'delay' ? 'Delay in ms: one number, or a range "min-max"' : `Share of messages to ${kind.effect}, 0 to 1`,
      value: kind.effect === 'delay' ? '2000' : kind.effect === 'drop' ? '1' : '0.5',
      validateInput: (v) => amountProblem(kind.effect, v),
    });
    if (amount === undefined) return;
    const type = await vscode.window.showInputBox({ title: 'Only one message type? (empty: every message)', placeHolder: 'e.g. MsgApp, Heartbeat, LeaseKeepAlive' });
    if (type === undefined) return;
    const effect = faultEffect(kind.effect, amount);
    const faults: LinkFault[] = [{ from, to, ...effect, ...(type.trim() && { type: type.trim() }) }];
    if (direction.both) faults.push({ ...faults[0]!, from: to, to: from });
    await this.session.act((cluster) => faults.forEach((f) => cluster.addLinkFault(f)));
    this.output.appendLine(`[cluster] link fault: ${faults.map(describeLinkFault).join('; ')}`);
  }

  async clearLinkFaults(): Promise<void> {
    await this.session.act((cluster) => cluster.clearLinkFaults());
    this.output.appendLine('[cluster] link faults cleared');
  }

  dispose(): void {
    this.closeConsole();
    this.subscription.dispose();
  }

  private requests(ops: readonly ClientOperation[], nodes: readonly string[]): RequestConsole {
    const cluster = this.requireRunning().cluster;
    if (this.console?.cluster !== cluster) {
      this.closeConsole();
      this.console = { cluster, requests: new RequestConsole(cluster, ops, nodes) };
    }
    return this.console.requests;
  }

  private closeConsole(): void {
    this.console?.requests.close();
    this.console = undefined;
  }

  /**
   * A quick pick that completes requests: typing filters the operations; picking one
   * fills in its template; Enter on a complete line sends it. Recent requests come first.
   */
  private askRequest(ops: readonly ClientOperation[], nodes: readonly string[], node: string): Promise<string | undefined> {
    type Item = vscode.QuickPickItem & { fill: string };
    const history = this.memento.get<string[]>(HISTORY_KEY, []);
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = 'Send a request: <node> <operation> field=value …';
    qp.placeholder = requestTemplate(ops[0]!, node);
    qp.matchOnDescription = true;
    const opItems = ops.map((op) => ({ label: op.type, description: argsLine(op) || '(no fields)', detail: `${op.doc}${op.to ? ` — to ${op.to}` : ''}`, fill: requestTemplate(op, node) }));
    const recent = history.map((h) => ({ label: h, description: 'recent', fill: h }));
    const refresh = () => {
      const typed = qp.value.trim();
      const [first, second] = typed.split(/\s+/);
      // Once a node and an operation are typed, the line itself is the item to send.
      const complete = second !== undefined && nodes.includes(first ?? '') ? [{ label: typed, description: 'send', alwaysShow: true, fill: typed }] : [];
      qp.items = [...complete, ...recent, { label: 'Operations', kind: vscode.QuickPickItemKind.Separator, fill: '' }, ...opItems];
    };
    refresh();
    return new Promise((resolve) => {
      let done = false;
      qp.onDidChangeValue(refresh);
      qp.onDidAccept(() => {
        const picked = qp.selectedItems[0];
        if (picked && picked.fill !== qp.value.trim() && picked.label !== qp.value.trim()) {
          // An operation picked: fill in its template, cursor at the end, and keep going.
          qp.value = picked.fill;
          refresh();
          return;
        }
        done = true;
        resolve(qp.value.trim() || undefined);
        qp.hide();
      });
      qp.onDidHide(() => {
        if (!done) resolve(undefined);
        qp.dispose();
      });
      qp.show();
    });
  }

  private async remember(line: string): Promise<void> {
    const history = [line, ...this.memento.get<string[]>(HISTORY_KEY, []).filter((h) => h !== line)].slice(0, HISTORY);
    await this.memento.update(HISTORY_KEY, history);
  }

  private firstRunning(): string | undefined {
    return this.session.nodes().find((n: NodeInfo) => n.status === 'running')?.id;
  }

  private requireRunning() {
    const running = this.session.running;
    if (!running) throw new UserError('no cluster is running; use "DDBench: Launch Cluster" first');
    return running;
  }
}

async function pickNode(nodes: readonly string[], title: string): Promise<string | undefined> {
  return (await vscode.window.showQuickPick(nodes.map((n) => ({ label: n })), { title }))?.label;
}

/** Why an amount is not one, for the input box; undefined when it is. */
function amountProblem(effect: FaultEffect, text: string): string | undefined {
  try {
    faultEffect(effect, text);
    return undefined;
  } catch (err) {
    return err instanceof UserError ? err.message : String(err);
  }
}
