// Client helpers shared by the BlockFS scenarios: a DFSClient that writes files
// through DataNode pipelines and reads them back, and cluster-wide checks that
// compare the NameNode's block map with what the DataNodes really store.

/** Resolves `expired` after ms, on the scenario's clock (real or simulated). */
export function deadline(t, ms) {
  const d = { expired: false };
  t.sleep(ms).then(() => {
    d.expired = true;
  });
  return d;
}

const RETRY = new Set(['timeout', 'down', 'not yet replicated', 'no datanodes']);

export class DfsClient {
  constructor(t, client) {
    this.t = t;
    this.c = client;
  }

  running() {
    return new Set(this.t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
  }

  async send(node, type, body, timeoutMs = 1000) {
    if (!this.running().has(node)) return { ok: false, error: 'down' };
    try {
      return await this.c.request(node, type, body, timeoutMs);
    } catch (e) {
      return { ok: false, error: 'timeout', detail: String(e?.message ?? e) };
    }
  }

  /** Retries a NameNode call until it succeeds or timeoutMs passes. */
  async nn(type, body, timeoutMs = 15000) {
    const d = deadline(this.t, timeoutMs);
    let last;
    do {
      last = await this.send('nn', type, body, 3000);
      if (last.ok || !RETRY.has(last.error)) return last;
      await this.t.sleep(100);
    } while (!d.expired);
    return last;
  }

  /** Creates `path` and writes one block per element of `chunks` through a pipeline. */
  async writeFile(path, chunks, replication = 3) {
    const created = await this.nn('Create', { path, replication });
    // A retried Create whose first attempt went through finds its own file.
    if (!created.ok && created.error !== 'file exists') return { ok: false, step: 'create', reply: created };
    for (const [index, data] of chunks.entries()) {
      let written = null;
      for (let attempt = 0; attempt < 5 && !written; attempt++) {
        const alloc = await this.nn('AddBlock', { path, index });
        if (!alloc.ok) return { ok: false, step: 'addBlock', reply: alloc };
        const [first, ...pipeline] = alloc.targets;
        const w = await this.send(first, 'WriteBlock', { block: alloc.block, data, pipeline }, 8000);
        if (w.ok) written = w;
      }
      if (!written) return { ok: false, step: 'writeBlock' };
    }
    const done = await this.nn('Complete', { path });
    return done.ok ? { ok: true } : { ok: false, step: 'complete', reply: done };
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

export async function connect(t, name) {
  return new DfsClient(t, await t.client(name));
}

const DATANODES = ['dn1', 'dn2', 'dn3', 'dn4'];

/** Waits until the NameNode counts `n` live DataNodes. */
export async function waitForDatanodes(t, dfs, n = 4, timeoutMs = 30000) {
  const d = deadline(t, timeoutMs);
  for (;;) {
    const f = await dfs.send('nn', 'Fsck', {});
    if (f.ok && f.liveNodes.length >= n) return true;
    if (d.expired) return false;
    await t.sleep(100);
  }
}

/**
 * Compares the NameNode's block map with the replicas the running DataNodes hold.
 * Returns per block: the expected replication, the NameNode's live locations, and the real holders.
 */
export async function census(t) {
  const nn = await t.state('nn').catch(() => null);
  const running = new Set(t.nodeInfo().filter((n) => n.status === 'running').map((n) => n.id));
  const holders = {};
  for (const dn of DATANODES.filter((d) => running.has(d))) {
    const s = await t.state(dn).catch(() => null);
    for (const id of Object.keys(s?.replicas ?? {})) (holders[id] ??= []).push(dn);
  }
  const alive = new Set((nn?.datanodes ?? []).filter((d) => d.alive).map((d) => d.id));
  const blocks = [];
  for (const [path, f] of Object.entries(nn?.namespace?.files ?? {})) {
    for (const b of f.blocks) {
      const known = (nn.blocks[b.id]?.locations ?? []).filter((d) => alive.has(d));
      blocks.push({ path, id: b.id, replication: f.replication, namenode: known, actual: (holders[b.id] ?? []).sort() });
    }
  }
  return blocks;
}

/** Polls the census until `pred(blocks)` holds or timeoutMs passes; returns the last census. */
export async function waitForCensus(t, pred, timeoutMs = 15000) {
  const d = deadline(t, timeoutMs);
  for (;;) {
    const blocks = await census(t);
    if (pred(blocks) || d.expired) return blocks;
    await t.sleep(200);
  }
}
