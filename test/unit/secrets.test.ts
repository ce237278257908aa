import { strict as assert } from 'node:assert';
import { LlmError } from '../../src/core/agent/llm';
import { nodeEnv } from '../../src/core/cluster/node-process';
import { addSecret, REDACTED, redact, redactJson } from '../../src/core/secrets';

describe('secrets: the one redaction step', () => {
  const KEY = 'sk-unit-secret-"quoted"-5a4b3c';
  before(() => addSecret(KEY));

  it('replaces every occurrence of a configured secret, also JSON-escaped, and leaves other text alone', () => {
    assert.equal(redact(`a ${KEY} b ${KEY}`), `a ${REDACTED} b ${REDACTED}`);
    const line = JSON.stringify({ msg: `key=${KEY}` });
    assert.ok(!line.includes(KEY), 'the test needs the escaped form to differ');
    assert.equal(redact(line), JSON.stringify({ msg: `key=${REDACTED}` }));
    assert.equal(redact('nothing secret here'), 'nothing secret here');
  });

  it('ignores values too short to redact safely', () => {
    addSecret('abc');
    addSecret('');
    addSecret(undefined);
    assert.equal(redact('abc cab'), 'abc cab');
  });

  it('redacts JSON values kept in memory, returning the same object when nothing matched', () => {
    const clean = { a: 1, b: ['x'] };
    assert.equal(redactJson(clean), clean);
    assert.deepEqual(redactJson({ fields: { env: { OPENAI_API_KEY: KEY } } }), { fields: { env: { OPENAI_API_KEY: REDACTED } } });
  });

  it('redacts what an endpoint said in an LlmError', () => {
    assert.equal(new LlmError('auth', `rejected ${KEY}`).message, `rejected ${REDACTED}`);
  });

  it("gives a live node the host's variables and nothing of the harness's environment", () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = KEY;
    try {
      assert.deepEqual(nodeEnv({ DDBENCH_NODE_ID: 'n1' }), { DDBENCH_NODE_ID: 'n1' });
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });
});
