import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventInput } from '../../src/core/events/event';
import { decideFaults, globMatch, isCut, partitionIndex } from '../../src/core/cluster/link-faults';
import { Router } from '../../src/core/cluster/router';
import { WireEndpoint } from '../fixtures/wire-endpoint';

/** A router on a real loopback port with a few connected endpoints, and the events it emitted. */
class Rig {
  readonly events: EventInput[] = [];
  readonly router: Router;
  readonly endpoints: WireEndpoint[] = [];
  private listeners: Array<() => void> = [];

  constructor(
    seed: number,
    readonly recordFile?: string,
    reorderHoldMs?: number,
  ) {
    this.router = new Router({
      seed,
      now: () => 0,
      emit: (e) => {
        this.events.push(e);
        for (const wake of this.listeners.splice(0)) wake();
      },
      ...(recordFile !== undefined && { recordFile }),
      ...(reorderHoldMs !== undefined && { reorderHoldMs }),
    });
  }

  async start(...names: string[]): Promise<WireEndpoint[]> {
    const port = await this.router.listen();
    for (const name of names) this.endpoints.push(await WireEndpoint.connect(port, name));
    return this.endpoints;
  }

  faults(msg?: string): EventInput[] {
    return this.events.filter((e) => e.kind === 'fault' && (msg === undefined || e.msg === msg));
  }

  async waitForEvent(pred: (e: EventInput) => boolean): Promise<EventInput> {
    for (;;) {
      const found = this.events.find(pred);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.listeners.push(resolve));
    }
  }

  async close(): Promise<void> {
    for (const e of this.endpoints) e.close();
    await this.router.close();
  }
}

describe('router', () => {
  let rig: Rig;
  afterEach(async () => rig?.close());

  it('forwards a message to its destination, with the sender set by the connection', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    a.socket.write(JSON.stringify({ t: 'msg', msgId: 'a:1', from: 'spoofed', to: 'b', type: 'x', body: { n: 1 }, vc: { a: 1 } }) + '\n');
    await b.waitForMessages(1);
    assert.deepEqual(b.messages()[0], { t: 'msg', msgId: 'a:1', from: 'a', to: 'b', type: 'x', body: { n: 1 }, vc: { a: 1 } });
    assert.deepEqual(rig.faults(), []);
  });

  it('drops by rule, and only messages of the rule\'s type', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    rig.router.faults.addLinkFault({ from: 'a', to: 'b', type: 'x', drop: 1 });
    const [dropped] = a.send({ to: 'b', type: 'x' }, { to: 'b', type: 'y' });
    await b.waitForMessages(1);
    // Both arrived on one connection in order, so x was decided before y was delivered.
    assert.deepEqual(b.messages().map((m) => m.type), ['y']);
    const [drop] = rig.faults('drop');
    assert.equal(drop?.msgId, dropped);
    assert.equal(drop?.peer, 'b');
    assert.deepEqual(drop?.fields, { from: 'a', to: 'b', type: 'x', reason: 'rule', rule: 0 });
  });

  it('matches wildcard endpoints', async () => {
    rig = new Rig(1);
    const [a, b, c] = await rig.start('a', 'b', 'c');
    rig.router.faults.addLinkFault({ from: '*', to: 'b', drop: 1 });
    a.send({ to: 'b', type: 'x' }, { to: 'c', type: 'marker' });
    await c.waitForMessages(1);
    c.send({ to: 'b', type: 'x' }, { to: 'a', type: 'marker' });
    await a.waitForMessages(1);
    assert.equal(b.messages().length, 0);
    assert.equal(rig.faults('drop').length, 2);
  });

  it('duplicates a message: two copies with the same id', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    rig.router.faults.addLinkFault({ from: 'a', to: 'b', type: 'x', duplicate: 1 });
    const [id] = a.send({ to: 'b', type: 'x' }, { to: 'b', type: 'marker' });
    await b.waitFor((f) => f.t === 'msg' && f.type === 'marker');
    assert.deepEqual(b.messages().map((m) => [m.msgId, m.type]), [[id, 'x'], [id, 'x'], ['a:2', 'marker']]);
    assert.equal(rig.faults('duplicate')[0]?.msgId, id);
  });

  it('reorders: a held message goes after the next one on its link', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    rig.router.faults.addLinkFault({ from: 'a', to: 'b', type: 'first', reorder: 1 });
    const [first] = a.send({ to: 'b', type: 'first' }, { to: 'b', type: 'second' });
    await b.waitForMessages(2);
    assert.deepEqual(b.messages().map((m) => m.type), ['second', 'first']);
    assert.equal(rig.faults('reorder')[0]?.msgId, first);
  });

  it('releases a reordered message after the hold time when nothing follows it', async () => {
    rig = new Rig(1, undefined, 10);
    const [a, b] = await rig.start('a', 'b');
    rig.router.faults.addLinkFault({ from: 'a', to: 'b', reorder: 1 });
    a.send({ to: 'b', type: 'lonely' });
    await b.waitForMessages(1);
    assert.equal(b.messages()[0]?.type, 'lonely');
  });

  it('delays a message, letting a later one overtake it', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    rig.router.faults.addLinkFault({ from: 'a', to: 'b', type: 'slow', delayMs: [300, 300] });
    const [slow] = a.send({ to: 'b', type: 'slow' }, { to: 'b', type: 'fast' });
    await b.waitForMessages(2);
    assert.deepEqual(b.messages().map((m) => m.type), ['fast', 'slow']);
    const [delay] = rig.faults('delay');
    assert.equal(delay?.msgId, slow);
    assert.equal(delay?.fields?.delayMs, 300);
  });

  it('partitions groups, keeps links of endpoints in no group, and heals', async () => {
    rig = new Rig(1);
    const [a, b, c] = await rig.start('a', 'b', 'c');
    rig.router.faults.partition([['a'], ['b']]);
    const [cut] = a.send({ to: 'b', type: 'cut' });
    await rig.waitForEvent((e) => e.msgId === cut);
    c.send({ to: 'b', type: 'from-c' });
    await b.waitForMessages(1);
    assert.deepEqual(b.messages().map((m) => m.type), ['from-c']);
    assert.deepEqual(rig.faults('drop')[0]?.fields, { from: 'a', to: 'b', type: 'cut', reason: 'partition' });
    rig.router.faults.heal();
    a.send({ to: 'b', type: 'healed' });
    await b.waitForMessages(2);
    assert.deepEqual(b.messages().map((m) => m.type), ['from-c', 'healed']);
    assert.equal(rig.faults().length, 1);
  });

  it('drops messages to endpoints that are not connected, and records every step', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-router-'));
    const recordFile = path.join(dir, 'router.jsonl');
    rig = new Rig(1, recordFile);
    const [a, b] = await rig.start('a', 'b');
    const [ghost] = a.send({ to: 'ghost', type: 'x' });
    await rig.waitForEvent((e) => e.msgId === ghost);
    const [ok] = a.send({ to: 'b', type: 'y', body: { k: 'v' } });
    await b.waitForMessages(1);
    assert.deepEqual(rig.faults('drop')[0]?.fields, { from: 'a', to: 'ghost', type: 'x', reason: 'unreachable' });
    await rig.close();
    const records = fs.readFileSync(recordFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      records.map((r) => [r.action, r.msgId]),
      [['recv', ghost], ['drop', ghost], ['recv', ok], ['deliver', ok]],
    );
    assert.deepEqual(records[2]?.body, { k: 'v' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends clock-skew control frames, again to an endpoint that reconnects', async () => {
    rig = new Rig(1);
    const [a] = await rig.start('a');
    rig.router.setSkew('a', 1234);
    assert.deepEqual(await a.waitFor((f) => f.t === 'skew'), { t: 'skew', offsetMs: 1234 });
    const again = await WireEndpoint.connect(rig.router.port, 'a');
    rig.endpoints.push(again);
    assert.deepEqual(await again.waitFor((f) => f.t === 'skew'), { t: 'skew', offsetMs: 1234 });
    // The newer connection replaced the old one.
    await a.closed;
  });

  it('reports a bad frame and keeps the connection', async () => {
    rig = new Rig(1);
    const [a, b] = await rig.start('a', 'b');
    a.socket.write('this is not json\n');
    a.send({ to: 'b', type: 'after' });
    await b.waitForMessages(1);
    assert.match(rig.events.find((e) => e.kind === 'log')?.msg ?? '', /bad frame from a: not JSON/);
  });

  it('makes the same seeded decisions for the same messages, over real TCP', async () => {
    const dropped = async (seed: number): Promise<string[]> => {
      rig = new Rig(seed);
      const [a, b] = await rig.start('a', 'b');
      rig.router.faults.addLinkFault({ from: 'a', to: 'b', type: 'x', drop: 0.5 });
      a.send(...Array.from({ length: 40 }, () => ({ to: 'b', type: 'x' })), { to: 'b', type: 'marker' });
      await b.waitFor((f) => f.t === 'msg' && f.type === 'marker');
      const ids = rig.faults('drop').map((e) => e.msgId ?? '');
      await rig.close();
      return ids;
    };
    const first = await dropped(7);
    assert.deepEqual(await dropped(7), first);
    assert.notDeepEqual(await dropped(8), first);
    assert.ok(first.length > 0 && first.length < 40);
  });
});

describe('link-fault decisions', () => {
  const msg = (i: number) => ({ msgId: `n1:${i}`, from: 'n1', to: 'n2', type: 'append' });

  it('depend only on seed, message and rule', () => {
    const rules = [{ from: 'n1', to: '*', drop: 0.3, duplicate: 0.3, reorder: 0.3, delayMs: [5, 50] as [number, number] }];
    const run = (seed: number) => Array.from({ length: 200 }, (_, i) => decideFaults(rules, msg(i), seed));
    assert.deepEqual(run(42), run(42));
    assert.notDeepEqual(run(42), run(43));
    // A decision for one message does not depend on which messages were decided before it.
    assert.deepEqual(decideFaults(rules, msg(150), 42), run(42)[150]);
    const drops = run(42).filter((d) => d.dropRule !== undefined).length;
    assert.ok(drops > 30 && drops < 90, `drop rate ${drops}/200 for p=0.3`);
    for (const d of run(42)) assert.ok(d.delayMs === 0 || (d.delayMs >= 5 && d.delayMs <= 50));
  });

  it('apply probabilities 0 and 1 exactly, and sum delays of matching rules', () => {
    assert.deepEqual(decideFaults([{ from: '*', to: '*', drop: 0 }], msg(1), 1), { duplicate: false, reorder: false, delayMs: 0 });
    const d = decideFaults(
      [
        { from: '*', to: '*', duplicate: 1, delayMs: [10, 10] },
        { from: 'n*', to: 'n2', delayMs: [5, 5] },
        { from: 'n1', to: 'n3', drop: 1 },
      ],
      msg(1),
      1,
    );
    assert.deepEqual(d, { duplicate: true, reorder: false, delayMs: 15 });
  });

  it('match globs and partitions', () => {
    assert.ok(globMatch('*', 'anything'));
    assert.ok(globMatch('n*', 'n12'));
    assert.ok(!globMatch('n*', 'client'));
    assert.ok(globMatch('a.b', 'a.b') && !globMatch('a.b', 'axb'));
    const index = partitionIndex([['n1', 'n2'], ['n3']]);
    assert.ok(isCut(index, 'n1', 'n3'));
    assert.ok(!isCut(index, 'n1', 'n2'));
    assert.ok(!isCut(index, 'client', 'n3'));
    assert.throws(() => partitionIndex([['n1'], ['n1', 'n2']]), /n1 is in more than one group/);
  });
});
