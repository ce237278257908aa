import type { SystemEntry } from '../bugs/catalog';
import type { BackendOptions } from '../cluster';

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
