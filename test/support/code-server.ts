// Runs a real VS Code (code-server, installed by `npm run setup:e2e`) on loopback for
// the end-to-end suite: installs a VSIX into a throwaway extensions folder and serves
// one window from a throwaway user-data folder.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export const CODE_SERVER_VERSION = '4.100.3';

/** Same default and override as scripts/setup-e2e.sh. */
export function codeServerBin(): string {
  const cache = process.env.DDBENCH_E2E_CACHE ?? path.join(os.homedir(), '.cache', 'ddbench-e2e');
  return path.join(cache, `code-server-${CODE_SERVER_VERSION}`, 'node_modules', '.bin', 'code-server');
}

export interface CodeServerDirs {
  extensionsDir: string;
  userDataDir: string;
}

/** Writes the user settings; trust and the welcome page would otherwise cover the workbench. */
export function writeUserSettings(dirs: CodeServerDirs, extra: Record<string, unknown>): void {
  const userDir = path.join(dirs.userDataDir, 'User');
  fs.mkdirSync(userDir, { recursive: true });
  const settings = { 'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none', ...extra };
  fs.writeFileSync(path.join(userDir, 'settings.json'), JSON.stringify(settings, null, 2));
}

export function installExtension(dirs: CodeServerDirs, vsix: string): string {
  const r = spawnSync(
    codeServerBin(),
    ['--extensions-dir', dirs.extensionsDir, '--user-data-dir', dirs.userDataDir, '--install-extension', vsix],
    { encoding: 'utf8', timeout: 120_000 },
  );
  const out = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0 || !/successfully installed/i.test(out)) throw new Error(`code-server --install-extension failed (${String(r.status)}):\n${out}`);
  return out;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export class CodeServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** Starts code-server in its own process group (so stop() reaches its extension hosts) and waits until it answers. */
  static async start(dirs: CodeServerDirs, logFile: string, folder?: string): Promise<CodeServer> {
    // code-server gives its own child process 10 s to start (wrapper.js), which a heavily
    // loaded machine can miss: it then exits saying "timed out". Start it again, a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await CodeServer.startOnce(dirs, logFile, folder);
      } catch (err) {
        const startupTimeout = err instanceof StartupTimeout;
        if (!startupTimeout || attempt >= 4) throw err;
        fs.appendFileSync(logFile, `[e2e] code-server's child missed its start-up handshake; starting it again (attempt ${attempt + 1})\n`);
      }
    }
  }

  private static async startOnce(dirs: CodeServerDirs, logFile: string, folder?: string): Promise<CodeServer> {
    const logStart = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    const port = await freePort();
    const log = fs.openSync(logFile, 'a');
    const args = [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--extensions-dir', dirs.extensionsDir,
      '--user-data-dir', dirs.userDataDir,
      ...(folder ? [folder] : []),
    ];
    // The extension must read the bug set it ships, not one named by the caller's environment.
    const env = { ...process.env };
    delete env.DDBENCH_BUGS;
    const child = spawn(codeServerBin(), args, { detached: true, stdio: ['ignore', log, log], env });
    fs.closeSync(log);
    const server = new CodeServer(child, `http://127.0.0.1:${port}/`);
    try {
      await server.waitHealthy(90_000);
    } catch (err) {
      await server.stop();
      const log = fs.readFileSync(logFile, 'utf8').slice(logStart);
      if (server.exited && /error timed out/.test(log)) throw new StartupTimeout(err instanceof Error ? err.message : String(err));
      throw err;
    }
    return server;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`code-server exited (${String(this.child.exitCode ?? this.child.signalCode)}) before it served`);
      try {
        const res = await fetch(`${this.url}healthz`);
        if (res.ok) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`code-server did not answer on ${this.url} within ${timeoutMs} ms`);
  }

  /** Stops the whole process group: TERM, then KILL whatever is left after a grace period. */
  async stop(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && groupAlive(pid)) await new Promise((r) => setTimeout(r, 200));
    signalGroup(pid, 'SIGKILL');
  }
}

class StartupTimeout extends Error {}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
