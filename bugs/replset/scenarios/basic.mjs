// basic — the everyday behaviour of a healthy replica set.
import { brief, connect, converge } from './lib/client.mjs';

export default {
  name: 'basic',
  description:
    'A healthy set elects a primary; secondaries refuse writes and name it; w:majority and w:1 inserts are ' +
    'acknowledged and read back with readConcern local and majority, on the primary and on the secondaries; ' +
    'every member ends with the same oplog and documents.',
  timeoutMs: 60000,
  async run(t) {
    const c = await connect(t, 'client-basic');
    const p = await c.findPrimary(25000);
    t.check('a primary is elected', p !== null);
    t.note('primary found', { primary: p.me, term: p.term });

    const secondary = t.nodes.find((n) => n !== p.me);
    const refused = await c.send(secondary, 'insert', { _id: 'probe', v: 1, writeConcern: { w: 1 } });
    t.check('a secondary refuses a write and names the primary', refused.ok === false && refused.error === 'NotWritablePrimary' && refused.primary === p.me, { refused });

    const expected = {};
    for (let i = 0; i < 15; i++) {
      const r = await c.insert(`doc${i}`, i);
      t.check('w:majority insert is acknowledged', r.ok === true, { _id: `doc${i}`, reply: r });
      expected[`doc${i}`] = i;
    }
    for (let i = 0; i < 5; i++) {
      const r = await c.insert(`fast${i}`, i, { w: 1 });
      t.check('w:1 insert is acknowledged', r.ok === true, { reply: r });
      expected[`fast${i}`] = i;
    }
    const over = await c.insert('doc0', 'zero');
    t.check('an overwrite is acknowledged', over.ok === true, { over });
    expected.doc0 = 'zero';

    const local = await c.find(p.me, 'doc0');
    const majority = await c.find(p.me, 'doc0', 'majority');
    t.check('the primary reads the acknowledged value', local.v === 'zero' && majority.v === 'zero', { local, majority });
    const none = await c.find(p.me, 'nope', 'majority');
    t.check('a missing document is not found', none.ok === true && none.found === false, { none });

    const conv = await converge(t);
    t.check('all members converge on the same oplog and commit point', conv.ok, { states: conv.states.map(brief) });
    for (const s of conv.states) {
      const missing = Object.entries(expected).filter(([k, v]) => s.docs[k] !== v).map(([k]) => k);
      t.check('every acknowledged write is on every member', missing.length === 0, { node: s.id, missing });
    }
    const onSecondary = await c.find(secondary, 'doc14', 'majority');
    t.check('a secondary serves a majority read of a committed write', onSecondary.ok === true && onSecondary.v === 14, { onSecondary });
  },
};
