import { Option, type Command } from 'commander';
import { z } from 'zod';
import { BUG_KINDS } from '../core/bugs/catalog';
import { Isolation } from '../core/sandbox/levels';
import { BACKENDS, backendOptions, type BackendOptions } from '../core/cluster';
import { UserError } from '../core/errors';
import type { TrialsOptions } from '../core/repro/trials';
import type { SimCheckOptions } from '../core/verify/simulate';
import { runCommand } from './output';

/**
 * Options a command takes, declared once per group: the commander options (flags,
 * help, defaults, env vars) and the zod schema that turns the values commander
 * collected (strings, booleans, defaults) into the core's option types. Commander only
 * collects; every value is checked here, so a bad one is a UserError naming its flag.
 */
export interface OptionGroup<T> {
  declare(command: Command): Command;
  parse(values: Record<string, unknown>): T;
}

/** The parsed options of a group. */
export type OptionsOf<G> = G extends OptionGroup<infer T> ? T : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** A group from its options and the schema of their values (keys are commander's attribute names). */
export function optionGroup<S extends z.ZodType>(options: readonly Option[], schema: S): OptionGroup<z.output<S>> {
  return {
    declare: (command) => options.reduce((c, o) => c.addOption(o), command),
    parse: (values) => {
      const r = schema.safeParse(values);
      if (!r.success) throw new UserError(r.error.issues.map(issueText).join('; '));
      return r.data;
    },
  };
}

/** Several groups as one: their options in order, their values side by side. */
export function options<G extends OptionGroup<unknown>[]>(...groups: G): OptionGroup<Intersection<OptionsOf<G[number]>>> {
  return {
    declare: (command) => groups.reduce((c, g) => g.declare(c), command),
    parse: (values) => {
      // Every group's bad values at once, not one group's at a time.
      const problems: string[] = [];
      const parsed = groups.map((g) => {
        try {
          return g.parse(values);
        } catch (err) {
          if (!(err instanceof UserError)) throw err;
          problems.push(err.message);
          return undefined;
        }
      });
      if (problems.length > 0) throw new UserError(problems.join('; '));
      return Object.assign({}, ...parsed) as Intersection<OptionsOf<G[number]>>;
    },
  };
}

/** Declares the group's options on `command`; its action parses them, then runs `body` (exit code from it, or from the error). */
export function withOptions<T, A extends unknown[]>(command: Command, group: OptionGroup<T>, body: (o: T, ...args: A) => Promise<number> | number): Command {
  return group.declare(command).action((...args: unknown[]) => {
    // Commander passes the arguments, then the options, then the command.
    const cmd = args.at(-1) as Command;
    return runCommand(async () => body(group.parse(cmd.opts()), ...(args.slice(0, -2) as A)));
  });
}

/** commander's attribute name back to the flag a person typed: dockerCpus → --docker-cpus. */
function flagOf(key: PropertyKey | undefined): string | undefined {
  return typeof key === 'string' ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : undefined;
}

function issueText(issue: z.core.$ZodIssue): string {
  const flag = flagOf(issue.path[0]);
  return flag === undefined || issue.message.startsWith(flag) ? issue.message : `${flag}: ${issue.message}`;
}

// ---- values ----

/** Commander gives a string, or the default as declared; `ok` checks it as a number. */
function numeric(ok: (n: number) => boolean, message: string) {
  return z.union([z.string(), z.number()]).transform((v, ctx) => {
    const n = Number(v);
    if (ok(n)) return n;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

export function count(flag: string, min: number) {
  return numeric((n) => Number.isInteger(n) && n >= min, `${flag} must be a whole number >= ${min}`);
}

export function number(flag: string, min: number, message = `${flag} must be a number >= ${min}`) {
  return numeric((n) => Number.isFinite(n) && n >= min, message);
}

const flag = z.boolean().optional();
const text = z.string().optional();

// ---- the groups commands share ----

/** --json. */
export function outputOptions(help = 'machine-readable output') {
  return optionGroup([new Option('--json', help)], z.object({ json: flag }));
}

/** --trials, --seed, --concurrency (each one a command has, with its help): the live trials' options. */
export function trialOptions(help: { trials?: string; seed?: string; concurrency?: string }) {
  const declared = [
    ...(help.trials !== undefined ? [new Option('--trials <n>', help.trials)] : []),
    ...(help.seed !== undefined ? [new Option('--seed <n>', help.seed)] : []),
    ...(help.concurrency !== undefined ? [new Option('--concurrency <n>', help.concurrency)] : []),
  ];
  const schema = z.object({
    trials: count('--trials', 1).optional(),
    seed: count('--seed', 0).optional(),
    concurrency: count('--concurrency', 1).optional(),
  });
  return optionGroup(declared, schema satisfies z.ZodType<Pick<Partial<TrialsOptions>, 'trials' | 'seed' | 'concurrency'>>);
}

export const CONCURRENCY_HELP = 'trials, and simulated seeds, at once (default: number of cores)';

/** --seeds, --buggy-seeds (validate) and --no-sim: the simulated seeds beside the live trials. */
export function simCheckOptions(help: { seeds: string; buggySeeds?: string }) {
  const declared = [
    new Option('--seeds <n>', help.seeds),
    ...(help.buggySeeds !== undefined ? [new Option('--buggy-seeds <n>', help.buggySeeds)] : []),
    new Option('--no-sim', 'live trials only, no simulated seeds'),
  ];
  const schema = z
    .object({ seeds: count('--seeds', 1).optional(), buggySeeds: count('--buggy-seeds', 1).optional(), sim: flag })
    .transform(({ seeds, buggySeeds, sim }): Omit<SimCheckOptions, 'onSimSeed'> => ({
      ...(sim !== undefined && { sim }),
      ...(seeds !== undefined && { simSeeds: seeds }),
      ...(buggySeeds !== undefined && { simBuggySeeds: buggySeeds }),
    }));
  return optionGroup(declared, schema);
}

const backendOption = () => new Option('--backend <name>', 'where the nodes run: child processes, or one docker container each').choices(BACKENDS).env('DDBENCH_BACKEND');
const imageOption = () =>
  new Option('--docker-image <ref>', "image for the nodes (docker backend; it must have node on PATH); default: one built from this machine's Node.js").env('DDBENCH_DOCKER_IMAGE');
const backendName = z.enum(BACKENDS).optional();

/** --backend, --docker-image, --docker-memory, --docker-cpus: where a command's live clusters run, as the core's backend options. */
export const clusterBackendOptions = optionGroup(
  [backendOption(), imageOption(), new Option('--docker-memory <MiB>', 'memory limit of each node container'), new Option('--docker-cpus <n>', 'CPU limit of each node container')],
  z
    .object({
      backend: backendName,
      dockerImage: text,
      dockerMemory: count('--docker-memory', 16).optional(),
      dockerCpus: numeric((n) => Number.isFinite(n) && n > 0, '--docker-cpus must be a number > 0 (0.5 is half a core)').optional(),
    })
    .transform((o): { backend: BackendOptions } => ({ backend: backendOptions({ backend: o.backend, image: o.dockerImage, memoryMb: o.dockerMemory, cpus: o.dockerCpus }) })),
);

/** --require-isolation: a study's rule that code under test runs at least this isolated. */
export const isolationOptions = optionGroup(
  [new Option('--require-isolation <level>', 'refuse to verify unless the code under test runs at least this isolated (docs/security.md)').choices(Isolation.options).env('DDBENCH_REQUIRE_ISOLATION')],
  z.object({ requireIsolation: Isolation.optional() }),
);

/** --backend and --docker-image for the agent's settings (which take the limits from system.json). */
export const agentBackendOptions = optionGroup([backendOption(), imageOption()], z.object({ backend: backendName, dockerImage: text }));

/** --base-url and --api-key-env: the OpenAI-compatible endpoint the agent talks to. */
export function endpointOptions(help: { baseUrl: string; apiKeyEnv: string }) {
  return optionGroup([new Option('--base-url <url>', help.baseUrl), new Option('--api-key-env <name>', help.apiKeyEnv)], z.object({ baseUrl: text, apiKeyEnv: text }));
}

/** The agent's limits per run (each one a command has, with its help). */
export function limitOptions(help: { maxSteps: string; maxAttempts: string; maxTokens?: string; maxCost: string; maxMinutes?: string }) {
  const declared = [
    new Option('--max-steps <n>', help.maxSteps),
    new Option('--max-attempts <n>', help.maxAttempts),
    ...(help.maxTokens !== undefined ? [new Option('--max-tokens <n>', help.maxTokens)] : []),
    new Option('--max-cost <usd>', help.maxCost),
    ...(help.maxMinutes !== undefined ? [new Option('--max-minutes <m>', help.maxMinutes)] : []),
  ];
  return optionGroup(
    declared,
    z.object({
      maxSteps: count('--max-steps', 1).optional(),
      maxAttempts: count('--max-attempts', 1).optional(),
      maxTokens: count('--max-tokens', 1).optional(),
      maxCost: number('--max-cost', 0, '--max-cost must be an amount in US dollars >= 0, e.g. 0.5').optional(),
      maxMinutes: number('--max-minutes', 0.02).optional(),
    }),
  );
}

/** `--kind`: narrows "every bug" to the miniatures or to the pilot tier in real upstream code. */
export const kindOptions = optionGroup(
  [new Option('--kind <kind>', 'with every bug (no ids, or all): only the miniatures or only the bugs in real upstream code').choices([...BUG_KINDS])],
  z.object({ kind: z.enum(BUG_KINDS).optional() }),
);
