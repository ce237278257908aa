import Docker from 'dockerode';
import { UserError } from '../../errors';

const PING_TIMEOUT_MS = 10_000;

const PROCESS_HINT = 'The process backend (--backend process, the default) needs no Docker.';

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** Where dockerode connects, as a user would write it (dockerode reads DOCKER_HOST the same way as the docker CLI). */
export function engineAddress(): string {
  return process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
}

/** Turns a failure to reach the engine into what the user should do about it. */
export function engineError(err: unknown): UserError {
  const where = engineAddress();
  const code = errnoOf(err);
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 'ENOENT') {
    return new UserError(
      `Docker is not installed or not running: no engine socket at ${where}. Install Docker (Debian/Ubuntu: apt-get install docker.io) and start it (systemctl start docker, or run dockerd), or point DOCKER_HOST at a running engine. ${PROCESS_HINT}`,
    );
  }
  if (code === 'ECONNREFUSED') {
    return new UserError(`the Docker daemon at ${where} is not running (connection refused). Start it (systemctl start docker, or run dockerd) or fix DOCKER_HOST. ${PROCESS_HINT}`);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new UserError(
      `permission denied on the Docker socket ${where}. Add your user to the docker group (sudo usermod -aG docker $USER, then log in again), or set DOCKER_HOST to an engine you may use (rootless Docker: unix://$XDG_RUNTIME_DIR/docker.sock). ${PROCESS_HINT}`,
    );
  }
  return new UserError(`cannot reach the Docker engine at ${where}: ${detail}. ${PROCESS_HINT}`);
}

/** A client for the engine DOCKER_HOST names (or the default socket), checked to answer. */
export async function connectEngine(): Promise<Docker> {
  let docker: Docker;
  try {
    docker = new Docker();
  } catch (err) {
    // docker-modem throws on a malformed DOCKER_HOST.
    throw new UserError(`DOCKER_HOST=${process.env.DOCKER_HOST ?? ''} is not usable: ${err instanceof Error ? err.message : String(err)}`);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([docker.ping(), timeout]);
  } catch (err) {
    throw engineError(err);
  } finally {
    clearTimeout(timer);
  }
  return docker;
}

/** The status code of an engine API error (404 no such container, 409 conflict, ...), if it is one. */
export function statusOf(err: unknown): number | undefined {
  return err instanceof Error && 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : undefined;
}

/** Runs an engine call whose "already gone" (404) or "already in that state" (304, 409) answers mean success. */
export async function idempotent(call: () => Promise<unknown>, ok: readonly number[] = [304, 404, 409]): Promise<void> {
  try {
    await call();
  } catch (err) {
    const status = statusOf(err);
    if (status === undefined || !ok.includes(status)) throw err;
  }
}

/** Reads an engine progress stream (image import or build) to its end; rejects with the first error it reports. */
export function followProgress(docker: Docker, stream: NodeJS.ReadableStream): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null, output: unknown[]) => {
      if (err) return reject(err);
      const failed = output.find((o): o is { error: string } => typeof o === 'object' && o !== null && 'error' in o && typeof o.error === 'string');
      if (failed !== undefined) reject(new Error(failed.error));
      else resolve(output);
    });
  });
}
