import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { UserError } from '../../errors';
import { isAlive } from '../../pid';

const exec = promisify(execFile);

/** The first of the uids the nodes of a run get (one each, the same in every run: iptables rules are per namespace). */
const FIRST_UID = 64_010;
const NETNS_PREFIX = 'ddb-';

export interface NodeAddress {
  id: string;
  ip: string;
  /** The uid the node's process runs as; its packets are told apart by it. */
  uid?: number;
}

/**
 * Where a run of real upstream binaries talks. As root: a network namespace of its own,
 * reached from the host through a veth pair, with an address and a uid per node, so a
 * partition cuts exactly the connections between two nodes (iptables marks each new
 * connection with the link it belongs to, by the sender's uid and the receiver's address,
 * and drops a cut link's packets in both directions). Without root: the host's loopback,
 * one address per node, and no partitions.
 */
export class RunNetwork {
  private cut = new Set<string>();
  private subnet: number | undefined;

  private constructor(
    /** The namespace's name, when the run has one. */
    readonly netns: string | undefined,
    readonly nodes: NodeAddress[],
  ) {}

  static async create(nodeIds: readonly string[], runTag: string): Promise<RunNetwork> {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) {
      return new RunNetwork(undefined, nodeIds.map((id, i) => ({ id, ip: `127.0.0.${10 + i}` })));
    }
    await reapNamespaces();
    for (let attempt = 0; ; attempt++) {
      const subnet = 1 + ((hash(`${runTag}:${attempt}`) % 250) >>> 0);
      if (subnetsInUse.has(subnet) || (await hostHasSubnet(subnet))) {
        if (attempt >= 20) throw new UserError('cannot find a free 10.213.x.0/24 subnet for the run\'s network namespace');
        continue;
      }
      const netns = `${NETNS_PREFIX}${process.pid}-${runTag.replace(/[^A-Za-z0-9]/g, '').slice(-8)}-${attempt}`;
      const net = new RunNetwork(netns, nodeIds.map((id, i) => ({ id, ip: `10.213.${subnet}.${10 + i}`, uid: FIRST_UID + i })));
      subnetsInUse.add(subnet);
      net.subnet = subnet;
      try {
        await net.setUp(subnet);
        return net;
      } catch (err) {
        await net.tearDown();
        if (attempt >= 20) throw new UserError(`cannot make the run's network namespace: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** The command prefix that runs a program inside the run's namespace. */
  enter(): string[] {
    return this.netns === undefined ? [] : ['ip', 'netns', 'exec', this.netns];
  }

  address(node: string): NodeAddress {
    const a = this.nodes.find((n) => n.id === node);
    if (a === undefined) throw new UserError(`no node "${node}"; the nodes are ${this.nodes.map((n) => n.id).join(', ')}`);
    return a;
  }

  /** Cuts every link between nodes in different groups (nodes in no group keep their links). */
  async partition(groups: string[][]): Promise<void> {
    this.requireNamespace('a partition');
    const group = new Map<string, number>();
    groups.forEach((g, i) => g.forEach((n) => group.set(this.address(n).id, i)));
    const cut = new Set<string>();
    for (const a of this.nodes) {
      for (const b of this.nodes) {
        const ga = group.get(a.id);
        const gb = group.get(b.id);
        if (a !== b && ga !== undefined && gb !== undefined && ga !== gb) cut.add(`${a.id}>${b.id}`);
      }
    }
    await this.applyCut(cut);
  }

  async heal(): Promise<void> {
    if (this.netns === undefined) return;
    await this.applyCut(new Set());
  }

  async tearDown(): Promise<void> {
    if (this.netns === undefined) return;
    await exec('ip', ['netns', 'del', this.netns]).catch(() => {});
    if (this.subnet !== undefined) subnetsInUse.delete(this.subnet);
  }

  private requireNamespace(what: string): void {
    if (this.netns === undefined) {
      throw new UserError(`${what} of a real upstream system needs the run's own network namespace, which needs root (run as root, or under sudo)`);
    }
  }

  private mark(from: number, to: number): number {
    return 1 + from * 64 + to;
  }

  private async setUp(subnet: number): Promise<void> {
    const ns = this.netns as string;
    const host = `ddbh${subnet}x${process.pid % 10000}`.slice(0, 15);
    await exec('ip', ['netns', 'add', ns]);
    const inNs = (...args: string[]) => exec('ip', ['netns', 'exec', ns, ...args]);
    await inNs('ip', 'link', 'set', 'lo', 'up');
    await exec('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await exec('ip', ['addr', 'add', `10.213.${subnet}.1/24`, 'dev', host]);
    await exec('ip', ['link', 'set', host, 'up']);
    for (const n of this.nodes) await inNs('ip', 'addr', 'add', `${n.ip}/24`, 'dev', 'eth0');
    await inNs('ip', 'link', 'set', 'eth0', 'up');
    const rules = ['*mangle'];
    this.nodes.forEach((a, i) =>
      this.nodes.forEach((b, j) => {
        if (i !== j) rules.push(`-A OUTPUT -m owner --uid-owner ${a.uid} -d ${b.ip} -m conntrack --ctstate NEW -j CONNMARK --set-mark ${this.mark(i, j)}`);
      }),
    );
    rules.push('COMMIT', '*filter', 'COMMIT', '');
    await restore(ns, rules.join('\n'));
  }

  private async applyCut(cut: Set<string>): Promise<void> {
    const ns = this.netns as string;
    const rules = ['*filter', '-F OUTPUT'];
    this.nodes.forEach((a, i) =>
      this.nodes.forEach((b, j) => {
        if (cut.has(`${a.id}>${b.id}`)) rules.push(`-A OUTPUT -m connmark --mark ${this.mark(i, j)} -j DROP`);
      }),
    );
    rules.push('COMMIT', '');
    // --noflush keeps the mangle table's marks; the filter table's OUTPUT chain is rewritten whole.
    await restore(ns, rules.join('\n'));
    this.cut = cut;
  }

  /** The links cut now, as `from>to`. */
  cutLinks(): string[] {
    return [...this.cut].sort();
  }
}

/** Subnets of this process's runs (another process's show on the host's interfaces). */
const subnetsInUse = new Set<number>();

async function hostHasSubnet(subnet: number): Promise<boolean> {
  const { stdout } = await exec('ip', ['-o', '-4', 'addr', 'show']);
  return stdout.includes(` 10.213.${subnet}.`);
}

async function restore(ns: string, rules: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = execFile('ip', ['netns', 'exec', ns, 'iptables-restore', '--noflush'], (err) => (err ? reject(err) : resolve()));
    child.stdin?.end(rules);
  });
}

/** Removes the namespaces of runs whose harness is gone (it was killed before it could clean up). */
async function reapNamespaces(): Promise<void> {
  let listed: string;
  try {
    listed = (await exec('ip', ['netns', 'list'])).stdout;
  } catch {
    return;
  }
  for (const line of listed.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const pid = Number(/^ddb-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await exec('ip', ['netns', 'del', name]).catch(() => {});
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
