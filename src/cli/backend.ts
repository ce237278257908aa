import { InvalidArgumentError, Option, type Command } from 'commander';
import { BACKENDS, type BackendName, type BackendOptions } from '../core/cluster';
import { parseCount } from './output';

/** The options every command that runs live clusters takes. */
export interface BackendOpts {
  backend?: BackendName;
  dockerImage?: string;
  dockerMemory?: number;
  dockerCpus?: number;
}

function parseCpus(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('--docker-cpus must be a number > 0 (0.5 is half a core).');
  return n;
}

export function withBackendOptions(command: Command): Command {
  return command
    .addOption(new Option('--backend <name>', 'where the nodes run: child processes, or one docker container each').choices(BACKENDS).env('DDBENCH_BACKEND'))
    .addOption(new Option('--docker-image <ref>', "image for the nodes (docker backend; it must have node on PATH); default: one built from this machine's Node.js").env('DDBENCH_DOCKER_IMAGE'))
    .option('--docker-memory <MiB>', 'memory limit of each node container', parseCount('--docker-memory', 16))
    .option('--docker-cpus <n>', 'CPU limit of each node container', parseCpus);
}

export function backendOptions(o: BackendOpts): BackendOptions {
  if (o.backend !== 'docker') return { backend: o.backend ?? 'process' };
  return {
    backend: 'docker',
    docker: {
      ...(o.dockerImage !== undefined && { image: o.dockerImage }),
      limits: { ...(o.dockerMemory !== undefined && { memoryMb: o.dockerMemory }), ...(o.dockerCpus !== undefined && { cpus: o.dockerCpus }) },
    },
  };
}
