import { strict as assert } from 'node:assert';
import { Command } from 'commander';
import { agentOptions } from '../../src/cli/commands/agent';
import { benchOptions } from '../../src/cli/commands/bench';
import { reproOptions } from '../../src/cli/commands/repro';
import { timelineOptions } from '../../src/cli/commands/timeline';
import { validateOptions } from '../../src/cli/commands/validate';
import { verifyOptions } from '../../src/cli/commands/verify';
import { limitOptions, withOptions, type OptionGroup } from '../../src/cli/options';
import { EXIT, runCommand } from '../../src/cli/output';
import { UserError } from '../../src/core/errors';

/** A throwaway command with the group's options; commander collects, the group parses. */
function parse<T>(group: OptionGroup<T>, args: string[]): T {
  const command = group.declare(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }));
  command.parse(args, { from: 'user' });
  return group.parse(command.opts());
}

/** Runs `body` with stderr captured and process.exitCode restored after. */
async function captured(body: () => Promise<void>): Promise<{ code: number | string | undefined; stderr: string }> {
  const saved = { code: process.exitCode, write: process.stderr.write };
  const err: string[] = [];
  process.stderr.write = ((chunk: string | Uint8Array) => err.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    await body();
    return { code: process.exitCode, stderr: err.join('') };
  } finally {
    process.stderr.write = saved.write;
    process.exitCode = saved.code;
  }
}

describe('CLI option groups (zod)', () => {
  it('parses the trial, simulation and backend groups into the core option types', () => {
    assert.deepEqual(parse(reproOptions, ['--trials', '3', '--seed', '0', '--concurrency', '2', '--seeds', '50', '--json']), {
      trials: 3,
      seed: 0,
      concurrency: 2,
      simSeeds: 50,
      sim: true,
      json: true,
      backend: { backend: 'process' },
    });
    assert.deepEqual(parse(reproOptions, ['--no-sim', '--backend', 'docker', '--docker-memory', '256']), { sim: false, backend: { backend: 'docker', docker: { limits: { memoryMb: 256 } } } });
    const v = parse(validateOptions, ['--buggy-seeds', '300', '--regression-trials', '2', '--keep-runs', 'runs']);
    assert.deepEqual([v.simBuggySeeds, v.regressionTrials, v.keepRuns], [300, 2, 'runs']);
  });

  it('turns --patch and --reference into the fix to verify', () => {
    assert.deepEqual(parse(verifyOptions, []).source, { kind: 'workspace' });
    assert.deepEqual(parse(verifyOptions, ['--reference']).source, { kind: 'reference' });
    const patch = parse(verifyOptions, ['--patch', 'fix.diff', '--fail-fast']);
    assert.equal(patch.source.kind === 'patch' && patch.source.file.endsWith('/fix.diff'), true);
    assert.equal(patch.failFast, true);
    assert.throws(() => parse(verifyOptions, ['--patch', 'a', '--reference']), (e: unknown) => e instanceof UserError && /either --patch FILE or --reference, not both/.test(e.message));
  });

  it('keeps the declared defaults, typed (bench and agent)', () => {
    const b = parse(benchOptions, ['--models', 'm1,m2']);
    // The plan's flags stay unset when not given (a study file may give them instead); the command applies their defaults.
    assert.deepEqual([b.bugs, b.conditions, b.repeats, b.concurrency, b.out], [undefined, undefined, undefined, 1, 'ddbench-bench']);
    const a = parse(agentOptions, ['--model', 'm', '--max-cost', '0.5', '--max-minutes', '1', '--timeout', '10']);
    assert.deepEqual([a.condition, a.protocol, a.maxCost, a.maxMinutes, a.timeout], ['symptom-only', 'auto', 0.5, 1, 10]);
  });

  it('names the flag of every bad value, in a UserError', () => {
    const bad: [OptionGroup<unknown>, string[], RegExp][] = [
      [reproOptions, ['--trials', 'zero'], /^--trials must be a whole number >= 1$/],
      [reproOptions, ['--trials', '1.5'], /--trials must be a whole number >= 1/],
      [reproOptions, ['--seed', '-1'], /--seed must be a whole number >= 0/],
      [reproOptions, ['--seeds', '0', '--concurrency', 'x'], /^--concurrency must be a whole number >= 1; --seeds must be a whole number >= 1$/],
      [reproOptions, ['--docker-cpus', '0'], /--docker-cpus must be a number > 0/],
      [reproOptions, ['--docker-memory', '8'], /--docker-memory must be a whole number >= 16/],
      [validateOptions, ['--buggy-seeds', 'many'], /--buggy-seeds must be a whole number >= 1/],
      [benchOptions, ['--models', 'm', '--repeats', '0'], /--repeats must be a whole number >= 1/],
      [limitOptions({ maxSteps: '', maxAttempts: '', maxCost: '' }), ['--max-cost', '-1'], /--max-cost must be an amount in US dollars >= 0/],
      [agentOptions, ['--model', 'm', '--evidence-budget', '10'], /--evidence-budget must be a whole number >= 1000/],
      [timelineOptions, ['--export', 'svg', 'out.svg'], /--export takes a format \(chrome or shiviz\) and an output file/],
      [timelineOptions, ['--format', 'csv'], /--format must be one of events, router, text, shiviz, otlp, chrome/],
      [timelineOptions, ['--export', 'chrome', 'out.json', '--compare', 'b'], /--compare applies to --html only/],
    ];
    for (const [group, args, message] of bad) {
      assert.throws(() => parse(group, args), (e: unknown) => e instanceof UserError && message.test(e.message), `${args.join(' ')}`);
    }
  });

  it('a command with a bad value prints the message and exits 2 before its body runs', async () => {
    let ran = false;
    const command = withOptions(new Command('repro').argument('<dir>').exitOverride(), reproOptions, () => {
      ran = true;
      return EXIT.ok;
    });
    const r = await captured(() => command.parseAsync(['ws', '--trials', 'zero'], { from: 'user' }).then(() => undefined));
    assert.equal(r.code, EXIT.usage);
    assert.equal(r.stderr, 'ddbench: --trials must be a whole number >= 1\n');
    assert.equal(ran, false);
  });

  it('passes the arguments and the parsed options to the body', async () => {
    let got: unknown;
    const command = withOptions(new Command('validate').argument('[bug...]').exitOverride(), validateOptions, (o, bugs: string[]) => {
      got = { bugs, trials: o.trials };
      return EXIT.failed;
    });
    const r = await captured(() => command.parseAsync(['a', 'b', '--trials', '2'], { from: 'user' }).then(() => undefined));
    assert.equal(r.code, EXIT.failed);
    assert.deepEqual(got, { bugs: ['a', 'b'], trials: 2 });
  });
});

describe('CLI exit codes', () => {
  it('0 and 1 come from the command', async () => {
    assert.equal((await captured(() => runCommand(async () => EXIT.ok))).code, 0);
    assert.equal((await captured(() => runCommand(async () => EXIT.failed))).code, 1);
  });

  it('a UserError exits 2 with its message only', async () => {
    const r = await captured(() => runCommand(async () => {
      throw new UserError('no bug "x"');
    }));
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'ddbench: no bug "x"\n');
  });

  it('any other error is internal: exit 70 with its stack', async () => {
    const r = await captured(() => runCommand(async () => {
      throw new TypeError('undefined is not a function');
    }));
    assert.equal(r.code, 70);
    assert.equal(EXIT.internal, 70);
    assert.match(r.stderr, /^ddbench: internal error: TypeError: undefined is not a function\n\s+at /);
  });
});
