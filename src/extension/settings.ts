import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { BACKENDS, backendOptions, type BackendOptions } from '../core/cluster';

/**
 * The extension's settings, checked with zod because users edit settings.json by hand.
 * vscode-free (the reader is passed in) so the manifest test can compare the keys with
 * package.json's `contributes.configuration`.
 */
export const SETTINGS = {
  workspacesDir: 'ddbench.workspacesDir',
  trials: 'ddbench.reproducer.trials',
  concurrency: 'ddbench.reproducer.concurrency',
  inspect: 'ddbench.cluster.inspect',
  backend: 'ddbench.backend',
  dockerImage: 'ddbench.docker.image',
} as const;

const Settings = z.object({
  workspacesDir: z.string().default('~/ddbench-workspaces'),
  trials: z.number().int().min(1).nullable().default(null),
  concurrency: z.number().int().min(1).nullable().default(null),
  inspect: z.boolean().default(true),
  backend: z.enum(BACKENDS).default('process'),
  dockerImage: z.string().default(''),
});

export interface DDBenchSettings {
  /** Absolute folder new bug workspaces go into. */
  workspacesDir: string;
  /** Reproducer trials; undefined means the bug's own count. */
  trials: number | undefined;
  concurrency: number | undefined;
  inspect: boolean;
  /** Where clusters run: ddbench.backend, with ddbench.docker.image for the docker backend. */
  backend: BackendOptions;
}

export class SettingsError extends Error {}

export function parseSettings(get: (key: string) => unknown): DDBenchSettings {
  const raw = Object.fromEntries(Object.entries(SETTINGS).map(([name, key]) => [name, get(key) ?? undefined]));
  const parsed = Settings.safeParse(raw);
  if (!parsed.success) {
    const byName = new Map<string, string>(Object.entries(SETTINGS));
    const problems = parsed.error.issues.map((i) => `${byName.get(String(i.path[0])) ?? String(i.path[0])}: ${i.message}`);
    throw new SettingsError(`invalid DDBench settings (fix them in Settings): ${problems.join('; ')}`);
  }
  const s = parsed.data;
  return {
    workspacesDir: expandHome(s.workspacesDir),
    trials: s.trials ?? undefined,
    concurrency: s.concurrency ?? undefined,
    inspect: s.inspect,
    backend: backendOptions({ backend: s.backend, image: s.dockerImage }),
  };
}

function expandHome(p: string): string {
  const withHome = p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
  return path.resolve(withHome);
}
