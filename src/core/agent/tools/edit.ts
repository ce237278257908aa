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

/** The text protocol's form: the path, then SEARCH/REPLACE blocks in git-conflict style. */
function parseEditText(body: string): unknown {
  const [first, ...rest] = body.replace(/\r\n/g, '\n').split('\n');
  const text = rest.join('\n');
  const edits: { search: string; replace: string }[] = [];
  const re = /^<{5,9} SEARCH\n([\s\S]*?)^={5,9}\n([\s\S]*?)^>{5,9} REPLACE$/gm;
  for (const m of text.matchAll(re)) edits.push({ search: m[1] ?? '', replace: m[2] ?? '' });
  return { path: (first ?? '').trim(), edits };
}
