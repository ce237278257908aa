import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { UserError } from '../../errors';
import type { NetemRule } from '../types';

const INTERFACE = 'eth0';

function pct(name: string, value: number | undefined): string[] {
  if (value === undefined) return [];
  if (!(value >= 0 && value <= 100)) throw new Error(`netem ${name} must be a percentage in [0, 100], got ${value}`);
  return [name, `${value}%`];
}

/** The tc command line for a rule; `replace` so a second rule overrides the first. */
export function netemCommand(rule: NetemRule): string[] {
  const delay = rule.delayMs ?? 0;
  if (!(delay >= 0) || !((rule.jitterMs ?? 0) >= 0)) throw new Error('netem delayMs and jitterMs must be >= 0');
  if (rule.reorderPct !== undefined && delay === 0) throw new Error('netem reorderPct needs a delayMs (reordering sends some packets ahead of delayed ones)');
  const delayArgs = delay > 0 || rule.jitterMs !== undefined ? ['delay', `${delay}ms`, ...(rule.jitterMs !== undefined ? [`${rule.jitterMs}ms`] : [])] : [];
  return ['tc', 'qdisc', 'replace', 'dev', INTERFACE, 'root', 'netem', ...delayArgs, ...pct('loss', rule.lossPct), ...pct('duplicate', rule.duplicatePct), ...pct('reorder', rule.reorderPct)];
}

export const NETEM_CLEAR = ['tc', 'qdisc', 'del', 'dev', INTERFACE, 'root'];
/** What tc says when there was no rule to clear. */
export const NOTHING_TO_CLEAR = /handle of zero|No such file or directory|Invalid handle/i;

/** Runs a command in the container as root (tc needs CAP_NET_ADMIN); resolves with its exit code and output. */
async function execAsRoot(container: Docker.Container, cmd: string[]): Promise<{ code: number; output: string }> {
  const exec = await container.exec({ Cmd: cmd, User: '0', Privileged: true, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  let output = '';
  const sink = new PassThrough();
  sink.setEncoding('utf8');
  sink.on('data', (chunk: string) => (output += chunk));
  container.modem.demuxStream(stream, sink, sink);
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  const { ExitCode } = await exec.inspect();
  return { code: ExitCode ?? -1, output: output.trim() };
}

/** Runs a tc command in a node's container; turns the ways it can be missing into what to do. */
export async function runTc(container: Docker.Container, node: string, cmd: string[], alreadyDone?: RegExp): Promise<void> {
  let result: { code: number; output: string };
  try {
    result = await execAsRoot(container, cmd);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/executable file not found|no such file/i.test(message)) {
      throw new UserError(`tc netem on ${node}: the node image has no \`tc\` (iproute2); use an image with it, or router link faults (delay, drop, duplicate, reorder), which need nothing`);
    }
    throw err;
  }
  if (result.code === 0 || alreadyDone?.test(result.output)) return;
  if (/qdisc kind is unknown/i.test(result.output)) {
    throw new UserError(`tc netem on ${node}: the engine's kernel has no netem (load the sch_netem module on the Docker host); router link faults (delay, drop, duplicate, reorder) work without it`);
  }
  if (/executable file not found|not found/i.test(result.output) || result.code === 126 || result.code === 127) {
    throw new UserError(`tc netem on ${node}: the node image has no \`tc\` (iproute2); use an image with it, or router link faults (delay, drop, duplicate, reorder), which need nothing`);
  }
  throw new Error(`tc netem on ${node}: \`${cmd.join(' ')}\` exited with ${result.code}: ${result.output}`);
}
