import { InvalidArgumentError, Option, type Command } from 'commander';
import { BACKENDS, backendOptions as optionsOf, type BackendName, type BackendOptions } from '../core/cluster';
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

/** Adds --backend and --docker-image, and with `limits` --docker-memory and --docker-cpus. */
export function withBackendOptions(command: Command, { limits = true } = {}): Command {
  command
    .addOption(new Option('--backend <name>', 'where the nodes run: child processes, or one docker container each').choices(BACKENDS).env('DDBENCH_BACKEND'))
    .addOption(new Option('--docker-image <ref>', "image for the nodes (docker backend; it must have node on PATH); default: one built from this machine's Node.js").env('DDBENCH_DOCKER_IMAGE'));
  if (!limits) return command;
  return command
    .option('--docker-memory <MiB>', 'memory limit of each node container', parseCount('--docker-memory', 16))
    .option('--docker-cpus <n>', 'CPU limit of each node container', parseCpus);
}

export function backendOptions(o: BackendOpts): BackendOptions {
  return optionsOf({ backend: o.backend, image: o.dockerImage, memoryMb: o.dockerMemory, cpus: o.dockerCpus });
}
