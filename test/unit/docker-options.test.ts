import { strict as assert } from 'node:assert';
import { Command } from 'commander';
import { SystemManifest } from '../../src/core/bugs/manifest';
import { backendFor } from '../../src/core/cluster/backend';
import { clusterBackendOptions } from '../../src/cli/options';
import type { BackendOptions } from '../../src/core/cluster/backend';
import { parseSettings, SETTINGS } from '../../src/extension/settings';
import { systemJson } from '../support/bugset';

/** How a backend is chosen and configured, from system.json, the command line and the settings; no engine needed. */
describe('docker backend options', () => {
  const system = (docker?: unknown) => ({ id: 'toy', kind: 'miniature' as const, dir: '/bugs/toy', manifest: SystemManifest.parse({ ...systemJson, ...(docker !== undefined && { docker }) }) });

  it("keeps system.json's docker section optional and checks it", () => {
    assert.equal(SystemManifest.parse(systemJson).docker, undefined);
    const parsed = SystemManifest.parse({ ...systemJson, docker: { context: 'docker', limits: { memoryMb: 256 } } });
    assert.deepEqual(parsed.docker, { context: 'docker', limits: { memoryMb: 256 } });
    assert.throws(() => SystemManifest.parse({ ...systemJson, docker: { image: 'a', context: 'b' } }), /either image or context/);
    assert.throws(() => SystemManifest.parse({ ...systemJson, docker: { limits: { memoryMb: 1 } } }));
    assert.throws(() => SystemManifest.parse({ ...systemJson, docker: { imag: 'typo' } }));
  });

  it("joins a system's image and limits with the user's, the user's limits winning", () => {
    assert.deepEqual(backendFor(system({ image: 'sys:1' }), {}), {});
    assert.deepEqual(backendFor(system({ image: 'sys:1' }), { backend: 'process' }), { backend: 'process' });
    const joined = backendFor(system({ context: 'docker', limits: { memoryMb: 256, cpus: 1 } }), { backend: 'docker', docker: { image: 'node:20-slim', limits: { cpus: 0.5 } } });
    assert.deepEqual(joined, {
      backend: 'docker',
      docker: { image: 'node:20-slim', system: { id: 'toy', dir: '/bugs/toy', context: 'docker' }, limits: { memoryMb: 256, cpus: 0.5 } },
    });
    assert.deepEqual(backendFor(system(), { backend: 'docker' }), { backend: 'docker' });
  });

  it('reads --backend, --docker-image and the limits on the command line, and DDBENCH_BACKEND', () => {
    const parse = (args: string[], env: Record<string, string> = {}): BackendOptions => {
      const saved = { ...process.env };
      Object.assign(process.env, env);
      try {
        const command = clusterBackendOptions.declare(new Command('x').exitOverride().configureOutput({ writeErr: () => undefined }));
        command.parse(args, { from: 'user' });
        return clusterBackendOptions.parse(command.opts()).backend;
      } finally {
        for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
      }
    };
    assert.deepEqual(parse([]), { backend: 'process' });
    assert.deepEqual(parse(['--backend', 'docker', '--docker-image', 'node:20-slim', '--docker-memory', '256', '--docker-cpus', '0.5']), {
      backend: 'docker',
      docker: { image: 'node:20-slim', limits: { memoryMb: 256, cpus: 0.5 } },
    });
    assert.deepEqual(parse([], { DDBENCH_BACKEND: 'docker' }), { backend: 'docker', docker: {} });
    assert.throws(() => parse(['--backend', 'kubernetes']), /Allowed choices are process, docker/);
    assert.throws(() => parse(['--backend', 'docker', '--docker-cpus', '0']), /--docker-cpus must be a number > 0/);
  });

  it('reads ddbench.backend and ddbench.docker.image from the settings', () => {
    const read = (values: Record<string, unknown>) => parseSettings((key) => values[key]);
    assert.deepEqual(read({}).backend, { backend: 'process' });
    assert.deepEqual(read({ [SETTINGS.backend]: 'docker' }).backend, { backend: 'docker', docker: {} });
    assert.deepEqual(read({ [SETTINGS.backend]: 'docker', [SETTINGS.dockerImage]: ' node:20-slim ' }).backend, { backend: 'docker', docker: { image: 'node:20-slim' } });
    assert.throws(() => read({ [SETTINGS.backend]: 'kubernetes' }), /ddbench\.backend/);
  });
});
