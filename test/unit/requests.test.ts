import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCatalog } from '../../src/core/bugs/catalog';
import type { ClientOperation } from '../../src/core/bugs/manifest';
import { describeLinkFault, faultEffect } from '../../src/core/cluster/link-faults';
import { argsLine, parseRequest, requestTemplate } from '../../src/core/cluster/requests';
import { UserError } from '../../src/core/errors';

const OPS: ClientOperation[] = [
  { type: 'Put', doc: 'write', args: { key: 'string', value: 'string', lease: 'number?' } },
  { type: 'Status', doc: 'status', args: {} },
  { type: 'insert', doc: 'insert', args: { _id: 'string', v: 'json', majority: 'boolean?' } },
];
const NODES = ['n1', 'n2', 'n3'];

function problem(line: string): string {
  try {
    parseRequest(line, OPS, NODES);
  } catch (err) {
    assert.ok(err instanceof UserError, String(err));
    return err.message;
  }
  assert.fail(`"${line}" parsed`);
}

/** The request console's language: `<node> <operation> field=value ...`, checked against system.json. */
describe('cluster requests typed by a person', () => {
  it('parses fields by their declared types, quotes and all', () => {
    assert.deepEqual(parseRequest('n2 Put key=a value="hello world" lease=7', OPS, NODES), { node: 'n2', type: 'Put', body: { key: 'a', value: 'hello world', lease: 7 } });
    assert.deepEqual(parseRequest('  n1   status ', OPS, NODES), { node: 'n1', type: 'Status', body: {} }, 'an operation in any case');
    assert.deepEqual(parseRequest('n3 insert _id=x v={"n":1} majority=true', OPS, NODES).body, { _id: 'x', v: { n: 1 }, majority: true });
    assert.deepEqual(parseRequest('n1 Put key=a value="" lease=', OPS, NODES).body, { key: 'a', value: '' }, '"" is the empty string; an empty optional field is left out');
  });

  it('names every mistake in a sentence: node, operation, field, type, missing field', () => {
    assert.match(problem('n9 Put key=a value=b'), /no node "n9".*n1, n2, n3/);
    assert.match(problem('n1 Frob'), /"Frob" is not an operation of this system; it has Put, Status, insert/);
    assert.match(problem('n1 Put key=a value=b colour=red'), /Put has no field "colour"; it takes key: string, value: string, lease\?: number/);
    assert.match(problem('n1 Put key=a value=b lease=soon'), /lease is a number; "soon" is not one/);
    assert.match(problem('n1 Put key=a'), /Put needs value/);
    assert.match(problem('n1 Put key=a value='), /Put needs value/, 'an empty value left from the template is no value');
    assert.match(problem('n1 insert _id=x v={oops'), /v takes JSON/);
    assert.match(problem('n1 Put keyvalue'), /"keyvalue" is not field=value/);
    assert.match(problem(''), /type a request: <node> <operation>/);
  });

  it('offers a template with every field to fill in', () => {
    assert.equal(requestTemplate(OPS[0]!, 'n1'), 'n1 Put key= value= lease=');
    assert.equal(argsLine(OPS[0]!), 'key: string, value: string, lease?: number');
  });

  it('reads a link fault\'s amount as a person types it, and words the fault back', () => {
    assert.deepEqual(faultEffect('delay', '2000'), { delayMs: [2000, 2000] });
    assert.deepEqual(faultEffect('delay', ' 500 - 3000 '), { delayMs: [500, 3000] });
    assert.deepEqual(faultEffect('drop', '1'), { drop: 1 });
    assert.deepEqual(faultEffect('duplicate', '0.5'), { duplicate: 0.5 });
    assert.throws(() => faultEffect('delay', '3000-500'), /a delay in ms/);
    assert.throws(() => faultEffect('delay', 'soon'), /a delay in ms/);
    assert.throws(() => faultEffect('drop', '2'), /between 0 and 1/);
    assert.throws(() => faultEffect('drop', ''), /between 0 and 1/);
    assert.equal(describeLinkFault({ from: 'n1', to: 'n2', type: 'MsgApp', delayMs: [2000, 2000] }), 'n1 → n2 (MsgApp): delay 2000 ms');
    assert.equal(describeLinkFault({ from: 'n2', to: '*', drop: 1 }), 'n2 → *: drop 1');
  });

  it('every system of the set declares its client operations, and its source handles each one', async () => {
    const catalog = await loadCatalog();
    for (const system of catalog.systems) {
      assert.ok(system.manifest.client.length > 0, `${system.id} declares no client operation in system.json`);
      // A real upstream system's operations name its own API (an HTTP path or a NATS subject), served by code we did not write.
      if (system.kind === 'upstream') {
        for (const op of system.manifest.client) assert.ok(op.http !== undefined || op.nats !== undefined || op.redis !== undefined, `${system.id}: ${op.type} names no HTTP path, NATS subject or Redis command of the real system`);
        continue;
      }
      const source = fs
        .readdirSync(path.join(system.dir, 'src'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.js') || f.endsWith('.mjs'))
        .map((f) => fs.readFileSync(path.join(system.dir, 'src', f), 'utf8'))
        .join('\n');
      for (const op of system.manifest.client) assert.ok(source.includes(`'${op.type}'`), `${system.id}: no handler for ${op.type} in src/`);
    }
  });
});
