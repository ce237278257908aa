// Other people's logs and traces (test/fixtures/interop/, sources and licences in its
// README): each file loads with the counts its reference gives (ShiViz's own parser and
// graph for ShiViz logs; counted from the file for the rest), and its Chrome and ShiViz
// exports read back to the same events and arrows. Inputs that must fail fail with a
// UserError naming the format.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../src/core/errors';
import { exportStore } from '../../src/core/events/export';
import { InputFormat } from '../../src/core/events/store';
import { loadRun } from '../../src/core/timeline/runs';
import { TimelineModel } from '../../src/core/timeline/model';
import type { RunMeta } from '../../src/core/timeline/protocol';
import { tempDir } from '../support/bugset';

const dir = path.resolve(__dirname, '..', 'fixtures', 'interop');
const Counts = z.object({ events: z.number(), lanes: z.number(), messages: z.number(), implied: z.number() });
const Entry = z.object({
  file: z.string(),
  note: z.string().optional(),
  format: z.enum(InputFormat).optional(),
  regex: z.string().optional(),
  delimiter: z.string().optional(),
  execution: z.union([z.string(), z.number()]).optional(),
  expect: Counts.optional(),
  error: z.string().optional(),
});
const corpus = z.object({ files: z.array(Entry) }).parse(JSON.parse(fs.readFileSync(path.join(dir, 'corpus.json'), 'utf8')));

function metaOf(run: Awaited<ReturnType<typeof loadRun>>): RunMeta {
  return new TimelineModel([run], { title: 'interop' }).meta().runs[0];
}

function countsOf(meta: RunMeta): z.infer<typeof Counts> {
  return { events: meta.events, lanes: meta.lanes.length, messages: meta.messages, implied: meta.impliedEdges };
}

describe('timeline: the interop corpus (third-party logs and traces)', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-interop-')));
  afterEach(() => t.dispose());

  for (const entry of corpus.files) {
    const file = path.join(dir, entry.file);
    const opts = { format: entry.format, regex: entry.regex, delimiter: entry.delimiter, execution: entry.execution };
    const what = `${entry.file}${entry.execution !== undefined ? ` (execution ${entry.execution})` : ''}${entry.note !== undefined ? ` — ${entry.note}` : ''}`;
    if (entry.error !== undefined) {
      const message = entry.error;
      it(`refuses ${what}: ${message}`, async () => {
        await assert.rejects(loadRun([file], opts), (err: Error) => err instanceof UserError && err.message.includes(message) && err.message.includes(path.basename(file)));
      });
      continue;
    }
    const expected = entry.expect;
    if (expected === undefined) throw new Error(`${entry.file}: corpus entry without expect or error`);
    it(`reads ${what} with the reference's counts, and its exports read back the same`, async () => {
      const run = await loadRun([file], opts);
      const meta = metaOf(run);
      assert.deepEqual(countsOf(meta), expected);
      assert.equal(meta.badCount, 0, `bad lines: ${JSON.stringify(meta.bad.slice(0, 3))}`);
      for (const format of ['chrome', 'shiviz'] as const) {
        const out = path.join(t.dir, `export.${format === 'chrome' ? 'json' : 'log'}`);
        const summary = await exportStore(run.store, format, out);
        assert.equal(summary.events, expected.events, `${format} export wrote every event`);
        const back = metaOf(await loadRun([out]));
        assert.equal(back.events, expected.events, `${format} export read back: events`);
        assert.equal(back.messages + back.impliedEdges, expected.messages + expected.implied, `${format} export read back: arrows`);
        assert.deepEqual(
          back.lanes.map((l) => l.name),
          meta.lanes.map((l) => l.name),
        );
      }
    });
  }
});
