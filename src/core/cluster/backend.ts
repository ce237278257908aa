import { z } from 'zod';
import type { SystemEntry } from '../bugs/catalog';
import type { DockerBackendOptions } from './docker-cluster';
import { BACKENDS, type BackendName } from './types';

/** Where a cluster's nodes run, and the backend's own settings. */
export interface BackendOptions {
  /** Default: process. */
  backend?: BackendName;
  docker?: DockerBackendOptions;
}

/**
 * A backend as a person chooses it, whichever host they choose it in (command-line
 * flags, editor settings, agent settings): checked here once, since all of them are
 * typed by hand.
 */
export const BackendChoice = z.strictObject({
  backend: z.enum(BACKENDS).default('process'),
  /** Image for the node containers; blank means the one built from this machine's Node.js. */
  image: z.string().optional(),
  memoryMb: z.number().int().min(16).optional(),
  cpus: z.number().positive().optional(),
});
export type BackendChoice = z.input<typeof BackendChoice>;

/** The backend options a choice stands for. */
export function backendOptions(choice: BackendChoice = {}): BackendOptions {
  const c = BackendChoice.parse(choice);
  if (c.backend !== 'docker') return { backend: c.backend };
  const image = c.image?.trim();
  const limits = { ...(c.memoryMb !== undefined && { memoryMb: c.memoryMb }), ...(c.cpus !== undefined && { cpus: c.cpus }) };
  return { backend: 'docker', docker: { ...(image && { image }), ...(Object.keys(limits).length > 0 && { limits }) } };
}

/** The backend options for one system: its own docker image and limits (system.json) joined with the user's. */
export function backendFor(system: SystemEntry, backend: BackendOptions = {}): BackendOptions {
  const own = system.manifest.docker;
  if (backend.backend !== 'docker' || own === undefined) return backend;
  const { limits, ...image } = own;
  return {
    ...backend,
    docker: {
      ...backend.docker,
      system: { id: system.id, dir: system.dir, ...image },
      limits: { ...limits, ...backend.docker?.limits },
    },
  };
}
