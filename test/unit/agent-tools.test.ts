import { strict as assert } from 'node:assert';
import { EvidenceBudget, truncateMiddle } from '../../src/core/agent/budget';
import { actionFromText, isAction } from '../../src/core/agent/protocol';
import { AgentScratch, ToolError } from '../../src/core/agent/scratch';
import { toolsFor, type ToolContext } from '../../src/core/agent/tools';
import { readFile, search } from '../../src/core/agent/tools/files';
import { costOf, DEFAULT_PRICES, priceOf } from '../../src/core/agent/pricing';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { resolveWorkspace } from '../../src/core/bugs/workspace';
import { AGENT_BUGSET, COUNTER_BUG, openTestWorkspace } from '../support/agent-fixture';
import { writeFiles } from '../support/bugset';

describe('agent: tools, protocol and budget', () => {
  let ws: Awaited<ReturnType<typeof openTestWorkspace>>;
  let scratch: AgentScratch;
  let ctx: ToolContext;

  before(async () => {
    ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
    writeFiles(ws.dir, { 'src/long.js': Array.from({ length: 1000 }, (_, i) => `const line${i + 1} = ${i + 1};`).join('\n') + '\n', 'src/aaa.txt': `${'a'.repeat(40)}!\n` });
    const r = await resolveWorkspace(ws.dir, await loadCatalog(AGENT_BUGSET));
    // The files written above stand for the person's edits: the agent starts from them.
    scratch = AgentScratch.create(ws.dir, r.system, r.bug, 'workspace');
    ctx = { scratch, budget: new EvidenceBudget(10_000), evidence: undefined, signal: new AbortController().signal, submit: () => assert.fail('no submit here') };
  });
  after(() => {
    scratch.dispose();
    ws.dispose();
  });

  it('reads a range of a long file, and says how to read on', async () => {
    const out = (await readFile.run({ path: 'src/long.js', start_line: 1 }, ctx)).output;
    assert.match(out, /^src\/long\.js \(lines 1-400 of 1000\)\n {4}1\| const line1 = 1;/);
    assert.match(out, /\[lines 1-400 of 1000; read from start_line 401 for more\]$/);
    const range = (await readFile.run({ path: 'src/long.js', start_line: 998, end_line: 2000 }, ctx)).output;
    assert.match(range, /lines 998-1000 of 1000\)\n {2}998\| const line998 = 998;\n {2}999\|/);
    await assert.rejects(readFile.run({ path: 'src/long.js', start_line: 1001 }, ctx), /has 1000 lines; start_line 1001 is past the end/);
    await assert.rejects(readFile.run({ path: 'src/totl.mjs', start_line: 1 }, ctx), ToolError);
  });

  it('searches by regex, in linear time even for a pattern that backtracks forever elsewhere', async () => {
    const hits = (await search.run({ pattern: 'line99\\d =', path: 'src', case_sensitive: false, max_results: 3 }, ctx)).output;
    assert.match(hits, /^src\/long\.js:990: const line990 = 990;\nsrc\/long\.js:991:/);
    assert.match(hits, /more than 3 matches/);
    const catastrophic = (await search.run({ pattern: '(a+)+$', path: 'src/aaa.txt', case_sensitive: true, max_results: 5 }, ctx)).output;
    assert.match(catastrophic, /^no line matches/);
    await assert.rejects(search.run({ pattern: '(', path: '', case_sensitive: false, max_results: 5 }, ctx), /not a valid regular expression/);
    await assert.rejects(search.run({ pattern: '(a)\\1', path: '', case_sensitive: false, max_results: 5 }, ctx), /backreferences/);
  });

  it('cuts long output in the middle and says what was cut', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n');
    const out = truncateMiddle(text, 1000, 'read less');
    assert.ok(out.length <= 1100);
    assert.match(out, /^line 0\n/);
    assert.match(out, /line 1999$/);
    assert.match(out, /\[\.\.\. \d+ characters \(\d+ lines\) cut from the middle; read less \.\.\.\]/);
  });

  it('charges evidence to the budget until it runs out', () => {
    const b = new EvidenceBudget(1000);
    b.take('x'.repeat(2000), 100_000);
    assert.ok(b.spent >= 500 && b.spent <= 1000);
    b.take('y'.repeat(10_000), 100_000);
    assert.match(b.take('z', 100), /evidence budget exhausted/);
  });

  it('parses a text-protocol edit with its SEARCH/REPLACE blocks, and rejects two actions in one reply', () => {
    const tools = toolsFor('symptom-only');
    const edit = actionFromText('Fix:\n```propose_edit\nsrc/total.mjs\n<<<<<<< SEARCH\n  return total + amount * 2;\n=======\n  return total + amount;\n>>>>>>> REPLACE\n```', tools, 't1');
    assert.ok(edit && isAction(edit));
    assert.deepEqual(edit.args, { path: 'src/total.mjs', edits: [{ search: '  return total + amount * 2;\n', replace: '  return total + amount;\n' }] });
    const two = actionFromText('```list_files\n{}\n```\n```read_file\n{"path":"x"}\n```', tools, 't2');
    assert.ok(two && !isAction(two) && /one action/.test(two.error));
    assert.equal(actionFromText('```js\nconst a = 1;\n```', tools, 't3'), undefined, 'a code block is not an action');
  });

  it('parses 2 MB adversarial text-protocol replies in one pass, with the right parse', () => {
    const tools = toolsFor('symptom-only');
    const action = '```list_files\n{"path": "src"}\n```\n';
    // Unclosed openings: each made the old lazy fence regex rescan the rest of the reply.
    assert.equal(actionFromText('```list_files\n'.repeat(150_000), tools, 'a1'), undefined);
    const strayClosings = actionFromText(`${'prose\n```\n'.repeat(200_000)}${action}`, tools, 'a2');
    assert.ok(strayClosings && isAction(strayClosings) && strayClosings.tool.name === 'list_files');
    assert.deepEqual(strayClosings.args, { path: 'src' });
    const longBody = actionFromText(`\`\`\`read_file\n{"path": "${'a'.repeat(2_000_000)}"}\n\`\`\``, tools, 'a3');
    assert.ok(longBody && isAction(longBody) && (longBody.args as { path: string }).path.length === 2_000_000);
    const unclosedEdits = actionFromText(`\`\`\`propose_edit\nsrc/x.js\n${'<<<<<<< SEARCH\n'.repeat(140_000)}\`\`\``, tools, 'a4');
    assert.ok(unclosedEdits && !isAction(unclosedEdits) && /edits/.test(unclosedEdits.error), 'no block was closed, so no edit');
  });

  it('prices tokens from the table by the longest model prefix, and leaves local models free', () => {
    assert.equal(priceOf('gpt-4o-mini-2024-07-18', DEFAULT_PRICES), DEFAULT_PRICES['gpt-4o-mini']);
    assert.equal(priceOf('llama3.1:8b', DEFAULT_PRICES), undefined);
    assert.equal(costOf({ promptTokens: 1_000_000, completionTokens: 1_000_000, cachedPromptTokens: 500_000 }, { input: 2, output: 8, cachedInput: 0.5 }), 1 + 0.25 + 8);
  });
});
