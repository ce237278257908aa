// BlockFS over the shared scenario library: a DFSClient that writes files through
// DataNode pipelines and reads them back, and cluster-wide checks that compare the
// NameNode's block map with what the DataNodes really store.
import { ScenarioClient, connectWith, poll, retry, running } from '../../../lib/scenario-lib.mjs';

const RETRY = new Set(['timeout', 'down', 'standby', 'still starting', 'not yet replicated', 'no datanodes']);
const NAMENODES = ['nn', 'nn2'];

export class DfsClient extends ScenarioClient {
  constructor(t, client) {
    super(t, client, { timeoutMs: 1000, skipDown: true });
    this.namenode = NAMENODES[0];
  }

  /**
   * Retries a NameNode call until it succeeds or timeoutMs passes; a NameNode that is down, standby
   * or still starting sends the call to the other one (ConfiguredFailoverProxyProvider).
   */
  nn(type, body, timeoutMs = 15000) {
    const attempt = async () => {
      const r = await this.send(this.namenode, type, body, 3000);
      if (['timeout', 'down', 'standby', 'still starting'].includes(r.error)) this.namenode = NAMENODES[(NAMENODES.indexOf(this.namenode) + 1) % NAMENODES.length];
      return r.ok || !RETRY.has(r.error) ? { done: r } : { again: r };
    };
    return retry(this.t, attempt, { timeoutMs, everyMs: 100 });
  }

  /** Creates `path` and writes one block per element of `chunks` through a pipeline. */
  async writeFile(path, chunks, replication = 3) {
    const created = await this.nn('Create', { path, replication });
    // A retried Create whose first attempt went through finds its own file.
    if (!created.ok && created.error !== 'file exists') return { ok: false, step: 'create', reply: created };
    for (const [index, data] of chunks.entries()) {
      const w = await this.writeBlock(path, index, data);
      if (!w.ok) return w;
    }
    return this.complete(path);
  }

  async complete(path) {
    const done = await this.nn('Complete', { path });
    return done.ok ? { ok: true } : { ok: false, step: 'complete', reply: done };
  }

  /**
   * Writes block number `index` of `path` through a pipeline (`alloc`, or a fresh AddBlock) and, when
   * not every DataNode acknowledges, recovers the pipeline as DFSOutputStream does.
   */
  async writeBlock(path, index, data, alloc = null) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const a = attempt === 0 && alloc ? alloc : await this.nn('AddBlock', { path, index });
      if (!a.ok) return { ok: false, step: 'addBlock', reply: a };
      const [first, ...pipeline] = a.targets;
      const w = await this.send(first, 'WriteBlock', { block: a.block, data, pipeline }, 8000);
      if (w.ok && w.acks.length === a.targets.length) return { ok: true, block: a.block, nodes: w.acks };
      // Nothing was sent: ask for another pipeline.
      if (w.error === 'down') continue;
      // Keep the DataNodes that acknowledged; with no acknowledgement at all, the first one is the bad one.
      return this.recoverPipeline(path, index, a.block, w.ok ? w.acks : a.targets.slice(1));
    }
    return { ok: false, step: 'writeBlock' };
  }

  /** Pipeline recovery: the surviving DataNodes together, then, if that stalls, each one alone. */
  async recoverPipeline(path, index, block, nodes) {
    const pipelines = nodes.length > 1 ? [nodes, ...nodes.map((n) => [n])] : [nodes];
    for (const [first, ...rest] of pipelines.filter((p) => p.length > 0)) {
      const stamp = await this.nn('UpdateBlockForPipeline', { path, index });
      if (!stamp.ok) return { ok: false, step: 'updateBlockForPipeline', reply: stamp };
      const r = await this.send(first, 'RecoverBlock', { block, newGs: stamp.gs, pipeline: rest }, 2000);
      if (!r.ok) continue;
      const u = await this.nn('UpdatePipeline', { path, index, gs: stamp.gs, nodes: r.acks });
      if (u.ok) return { ok: true, block: { id: block.id, gs: stamp.gs }, nodes: r.acks };
    }
    return { ok: false, step: 'recoverPipeline' };
  }

  /** Reads every block of `path` from the first location that has it. */
  async readFile(path) {
    const loc = await this.nn('GetBlockLocations', { path });
    if (!loc.ok) return { ok: false, reply: loc };
    const chunks = [];
    for (const b of loc.blocks) {
      let data = null;
      for (const dn of b.locations) {
        const r = await this.send(dn, 'ReadBlock', { block: b.id });
        if (r.ok) {
          data = r.data;
          break;
        }
      }
      if (data === null) return { ok: false, error: 'could not obtain block', block: b.id, locations: b.locations };
      chunks.push(data);
    }
    return { ok: true, chunks };
  }
}

export const connect = (t, name) => connectWith(DfsClient, t, name);

const DATANODES = ['dn1', 'dn2', 'dn3', 'dn4'];

/** Waits until the NameNode counts `n` live DataNodes. */
export async function waitForDatanodes(t, dfs, n = 4, timeoutMs = 30000) {
  return (await poll(t, () => dfs.send('nn', 'Fsck', {}), { timeoutMs, done: (f) => f.ok && f.liveNodes.length >= n })).ok;
}

/**
 * Compares the block map of NameNode `namenode` with the replicas the running DataNodes hold.
 * Returns per block: the expected replication, the NameNode's live locations, and the real
 * holders of a replica with the block's generation stamp.
 */
export async function census(t, namenode = 'nn') {
  const nn = await t.state(namenode).catch(() => null);
  const replicas = {};
  for (const dn of running(t, DATANODES)) {
    const s = await t.state(dn).catch(() => null);
    for (const [id, gs] of Object.entries(s?.replicas ?? {})) (replicas[id] ??= []).push({ dn, gs });
  }
  const alive = new Set((nn?.datanodes ?? []).filter((d) => d.alive).map((d) => d.id));
  const blocks = [];
  for (const [path, f] of Object.entries(nn?.namespace?.files ?? {})) {
    for (const b of f.blocks) {
      const known = (nn.blocks[b.id]?.locations ?? []).filter((d) => alive.has(d));
      const actual = (replicas[b.id] ?? []).filter((r) => r.gs === b.gs).map((r) => r.dn);
      blocks.push({ path, id: b.id, gs: b.gs, replication: f.replication, namenode: known, actual: actual.sort() });
    }
  }
  return blocks;
}

/** Polls the census (of NameNode `namenode`) until `pred(blocks)` holds or timeoutMs passes; returns the last census. */
export async function waitForCensus(t, pred, timeoutMs = 15000, namenode = 'nn') {
  return (await poll(t, () => census(t, namenode), { timeoutMs, everyMs: 200, done: pred })).value;
}
