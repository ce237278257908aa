import { createTwoFilesPatch } from 'diff';
import { z } from 'zod';
import { applyEditBlocks, EditBlockError } from '../../patch/search-replace';
import { truncateMiddle } from '../budget';
import { ToolError } from '../scratch';
import { defineTool, MAX_OUTPUT_CHARS } from './types';

const EditArgs = z.strictObject({
  path: z.string().min(1),
  edits: z
    .array(z.strictObject({ search: z.string().describe('exact lines of the current file, with enough context to be unique'), replace: z.string() }))
    .min(1)
    .max(20),
});

export const proposeEdit = defineTool({
  name: 'propose_edit',
  description:
    'Edit one file of your working copy with search/replace blocks. SEARCH must be copied from the file (a few whole lines, unique in it); ' +
    'whitespace and indentation differences are tolerated. All blocks apply or none do. An empty SEARCH creates a new file. ' +
    'Edits stay in your working copy until you submit.',
  args: EditArgs,
  textForm: {
    describe: 'the file path on the first line, then one or more blocks:\n<<<<<<< SEARCH\n(lines to find)\n=======\n(lines to put instead)\n>>>>>>> REPLACE',
    parse: parseEditText,
  },
  async run({ path, edits }, { scratch }) {
    const before = scratch.exists(path) ? scratch.read(path) : '';
    let result: ReturnType<typeof applyEditBlocks>;
    try {
      result = applyEditBlocks(before, edits, path);
    } catch (err) {
      if (err instanceof EditBlockError) {
        const others = edits.length > 1 ? ` No block was applied (${edits.length} were sent); fix block ${err.block} and send all of them again.` : '';
        throw new ToolError(`${err.message}${others}`);
      }
      throw err;
    }
    scratch.write(path, result.content);
    const tolerated = result.applied.filter((a) => a.strategy !== 'exact');
    const how = tolerated.length ? ` (${tolerated.map((a) => `block ${a.block} matched ignoring ${a.strategy}`).join('; ')})` : '';
    const diff = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, result.content, undefined, undefined, { context: 2 }).replace(/^=+\n/m, '');
    return {
      output: truncateMiddle(`applied ${edits.length} block(s) to ${path}${how}:\n${diff}`, MAX_OUTPUT_CHARS),
      data: { path, blocks: edits.length, strategies: result.applied.map((a) => a.strategy) },
    };
  },
});

const SEARCH = /^<{5,9} SEARCH$/;
const DIVIDER = /^={5,9}$/;
const REPLACE = /^>{5,9} REPLACE$/;

/**
 * The text protocol's form: the path, then SEARCH/REPLACE blocks in git-conflict style.
 * One pass over the lines (a lazy regex over the body rescanned it for every unclosed
 * block, quadratic in a hostile reply).
 */
function parseEditText(body: string): unknown {
  const [first, ...lines] = body.replace(/\r\n/g, '\n').split('\n');
  const edits: { search: string; replace: string }[] = [];
  let state: 'outside' | 'search' | 'replace' = 'outside';
  let search: string[] = [];
  let replace: string[] = [];
  for (const [k, line] of lines.entries()) {
    if (state === 'outside') {
      if (SEARCH.test(line)) [state, search, replace] = ['search', [], []];
    } else if (state === 'search') {
      // The divider must end its line; the last line of the body has no newline.
      if (DIVIDER.test(line) && k < lines.length - 1) state = 'replace';
      else search.push(line);
    } else if (REPLACE.test(line)) {
      edits.push({ search: search.map((l) => `${l}\n`).join(''), replace: replace.map((l) => `${l}\n`).join('') });
      state = 'outside';
    } else replace.push(line);
  }
  return { path: (first ?? '').trim(), edits };
}
