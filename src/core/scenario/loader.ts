import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { UserError } from '../errors';
import type { Scenario } from './scenario';

const ScenarioShape = z.object({
  name: z.string().min(1),
  description: z.string(),
  timeoutMs: z.number().int().positive(),
  config: z.record(z.string(), z.unknown()).optional(),
  run: z.custom<Scenario['run']>((v) => typeof v === 'function', 'must be an async function run(t)'),
});

/** Loads a scenario module (its default export), checking its shape so a bad file says what is wrong. */
export async function loadScenario(file: string): Promise<Scenario> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new UserError(`${file}: cannot load scenario (${(err as Error).message})`);
  }
  const parsed = ScenarioShape.safeParse(mod.default);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.') || 'default export'}: ${i.message}`);
    throw new UserError(`${file}: invalid scenario\n${problems.join('\n')}`);
  }
  return parsed.data as Scenario;
}
