import { Option } from 'commander';
import { z } from 'zod';
import { hintLadder, revealReferenceFix, takeNextHint, type Hint } from '../../core/study/hints';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say } from '../output';

export const hintOptions = options(
  optionGroup(
    [
      new Option('--list', 'show the hints taken so far without taking another'),
      new Option('--reference', "print the bug's reference fix (a unified diff; practice only, refused during a study attempt)").conflicts('list'),
    ],
    z.object({ list: z.boolean().default(false), reference: z.boolean().default(false) }),
  ),
  outputOptions(),
);

export async function commandHint(dir: string, o: OptionsOf<typeof hintOptions>): Promise<number> {
  if (o.reference) {
    const diff = await revealReferenceFix(dir);
    if (o.json) printJson({ reference: diff });
    else process.stdout.write(diff);
    return EXIT.ok;
  }
  const ladder = o.list ? await hintLadder(dir) : await takeNextHint(dir);
  if (o.json) {
    printJson(ladder);
    return EXIT.ok;
  }
  if (ladder.shown.length === 0) say(`No hints taken yet (${ladder.total} in this bug's ladder). \`ddbench hint ${dir}\` takes the first.`);
  for (const h of ladder.shown) say(hintText(h, h === ladder.shown.at(-1) && ladder.revealed !== undefined));
  if (!o.list && ladder.revealed === undefined) say(`\nEvery hint is shown (${ladder.total} of ${ladder.total}). \`ddbench hint ${dir} --reference\` prints the reference fix.`);
  else if (ladder.revealed && ladder.revealed.level < ladder.total) say(`\n${ladder.total - ladder.revealed.level} more; each one you take is recorded${ladder.during === 'attempt' ? ' in your attempt' : ''}.`);
  return EXIT.ok;
}

function hintText(h: Hint, isNew: boolean): string {
  return `${isNew ? '▶ ' : '  '}Hint ${h.level} of ${h.total} (${h.stage}): ${h.text}`;
}
