import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { buildCliImage, CLI_REPO, PACKAGE_IN_IMAGE, type CliImage } from '../../src/core/cluster/docker/cli-image';
import { IMAGE_LABEL } from '../../src/core/cluster/docker/node-image';
import { onPath } from '../../src/core/cluster/docker/rootfs';
import { packageRoot } from '../../src/core/paths';
import { planBench } from '../../src/core/study/bench';
import { loadRecords } from '../../src/core/study/collect';
import { Report } from '../../src/core/study/report';
import { allText, KEY } from '../support/agent-fixture';
import { dockerOrSkip } from '../support/docker';
import { notReproduced, podContainer, readJobManifest } from '../support/job-pod';
import { ORACLE_MODEL, oracleReplies } from '../support/oracle-model';
import { ScriptedOpenAIServer } from '../support/scripted-openai-server';

const ROOT = packageRoot();
const cli = path.join(ROOT, 'bin', 'ddbench.js');
/** Two tier-1 miniatures whose live trials are short; one model, both conditions, one repeat: four runs, two a shard. */
const BUGS = ['raftkv-lock-double-grant', 'zabkv-ephemeral-outlives-session'];
const CONDITIONS = ['symptom-only', 'context-augmented'] as const;
const SHARDS = 2;
const RUN_LABEL = 'ddbench.test';

/** A container's log, stdout and stderr together (the engine's multiplexed frames unwrapped). */
async function logsOf(container: Docker.Container): Promise<string> {
  const raw = await container.logs({ stdout: true, stderr: true, follow: false });
  let out = '';
  for (let at = 0; at + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(at + 4);
    out += raw.subarray(at + 8, at + 8 + size).toString('utf8');
    at += 8 + size;
  }
  return out;
}

/** Every regular file of `dir` in an image, by path, with the SHA-256 of its content. */
async function filesInImage(docker: Docker, image: string, dir: string): Promise<Map<string, string>> {
  const container = await docker.createContainer({ Image: image, Cmd: ['none'], Labels: { [RUN_LABEL]: 'deploy' } });
  try {
    const files = new Map<string, string>();
    const extract = tar.extract();
    extract.on('entry', (header, stream, next) => {
      const hash = createHash('sha256');
      stream.on('data', (c: unknown) => {
        hash.update(c as Buffer);
      });
      stream.on('end', () => {
        if (header.type === 'file' && `/${header.name}`.startsWith(`${dir}/`)) files.set(`/${header.name}`, hash.digest('hex'));
        next();
      });
    });
    const done = new Promise<void>((resolve, reject) => {
      extract.on('finish', () => resolve());
      extract.on('error', reject);
    });
    (await container.export()).pipe(extract);
    await done;
    return files;
  } finally {
    await container.remove({ force: true });
  }
}

function ddbench(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The CLI image built without a registry, then two shards of a small study run in it as
 * the indexed Job's two pods would (deploy/k8s/base/job.yaml's command, environment,
 * volumes, user and security settings, read from the manifest), against the scripted
 * OpenAI-compatible server (the scripted oracle model; no LLM is reachable here) on the
 * docker bridge's host address; their records, collected from the shared results folder,
 * merged and reported on this machine, cover every run of the plan once. No Kubernetes
 * cluster exists here: what Docker cannot give one container of the pod is printed.
 */
describe('deploy: the CLI image runs two shards of a study as the Job’s pods would', function () {
  this.timeout(20 * 60_000);
  let docker: Docker;
  let image: CliImage;
  let tmp: string | undefined;
  let server: ScriptedOpenAIServer | undefined;
  let network: Docker.Network | undefined;
  const containers: Docker.Container[] = [];
  const ours = { label: [`${RUN_LABEL}=deploy`] };
  const ourDangling = { dangling: ['true'], label: [IMAGE_LABEL] };
  let danglingBefore = 0;

  before(async function () {
    docker = await dockerOrSkip(this);
    if (onPath('bwrap') === undefined) {
      console.log('      (deploy tests skipped: bubblewrap is not installed, and the CLI image carries it; apt-get install bubblewrap)');
      this.skip();
    }
    danglingBefore = (await docker.listImages({ filters: ourDangling })).length;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-deploy-'));
    image = await buildCliImage(docker);
    console.log(`      ${image.ref}: ${image.built ? `built in ${(image.durationMs / 1000).toFixed(1)} s` : `cached (${image.durationMs} ms to check)`}, ${(image.sizeBytes / 1e6).toFixed(0)} MB`);
  });

  after(async () => {
    if (docker === undefined) return;
    for (const c of containers) await c.remove({ force: true }).catch(() => undefined);
    if (network) await network.remove().catch(() => undefined);
    await server?.close();
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("the Dockerfile's package stage holds the same files as the image built offline", async function () {
    if (spawnSync('docker', ['--version']).status !== 0) {
      console.log('      (no docker CLI to build deploy/Dockerfile with: skipped)');
      this.skip();
    }
    const tag = `ddbench-package-test:${randomBytes(4).toString('hex')}`;
    // Its `package` stage is FROM scratch, so it builds without a registry; the node:20 stage needs one and is not built here.
    const build = spawnSync('docker', ['build', '-q', '--target', 'package', '--label', `${RUN_LABEL}=deploy`, '-f', 'deploy/Dockerfile', '-t', tag, '.'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    assert.equal(build.status, 0, build.stderr);
    try {
      const fromDockerfile = await filesInImage(docker, tag, PACKAGE_IN_IMAGE);
      const offline = await filesInImage(docker, image.ref, PACKAGE_IN_IMAGE);
      assert.ok(offline.has(`${PACKAGE_IN_IMAGE}/dist/cli.js`) && offline.has(`${PACKAGE_IN_IMAGE}/bugs/raftkv/system.json`));
      assert.deepEqual([...fromDockerfile.entries()].sort(), [...offline.entries()].sort());
    } finally {
      await docker.getImage(tag).remove({ force: true });
    }
  });

  it('two containers, each one pod of the indexed Job, run their shards; the merged records report every run once', async () => {
    assert.ok(tmp !== undefined);
    const job = readJobManifest();
    assert.equal(job.spec.completions, SHARDS, 'the manifest as shipped runs two shards');
    console.log(`      not reproduced on Docker: ${notReproduced(job).join('; ')}`);
    const catalog = await loadCatalog();

    network = await docker.createNetwork({ Name: `ddbench-deploy-${randomBytes(4).toString('hex')}`, Driver: 'bridge', Labels: { [RUN_LABEL]: 'deploy' } });
    const gateway = ((await network.inspect()) as { IPAM: { Config: { Gateway?: string }[] } }).IPAM.Config[0]?.Gateway;
    assert.ok(gateway, 'the bridge has a gateway address');
    // The host's side of the bridge: containers on it reach the server, the public network does not.
    const reply = oracleReplies(catalog);
    server = await ScriptedOpenAIServer.start({ host: gateway, apiKey: KEY, models: [ORACLE_MODEL], replies: Array.from({ length: 400 }, () => reply) });

    const studyDir = path.join(tmp, 'study');
    const results = path.join(tmp, 'results');
    fs.mkdirSync(studyDir);
    fs.mkdirSync(results);
    const study = { v: 1, name: 'deploy-rehearsal', bugs: BUGS, models: [{ name: ORACLE_MODEL }], conditions: [...CONDITIONS], repeats: 1, trials: 1, limits: { maxSteps: 20, maxAttempts: 1 }, isolation: 'bwrap' };
    const studyFile = path.join(studyDir, 'study.json');
    fs.writeFileSync(studyFile, JSON.stringify(study, null, 2));
    // The pod's user owns the results volume (Kubernetes: fsGroup).
    const uid = job.spec.template.spec.securityContext.runAsUser;
    fs.chownSync(results, uid, job.spec.template.spec.securityContext.runAsGroup);

    const started = Date.now();
    for (let index = 0; index < SHARDS; index++) {
      const c = await docker.createContainer({
        ...podContainer(job, {
          image: image.ref,
          index,
          configMaps: { 'ddbench-settings/endpoint': server.url },
          secrets: { 'api-key': KEY },
          volumes: { study: studyDir, results },
          network: network.id,
          labels: { [RUN_LABEL]: 'deploy' },
        }),
        name: `ddbench-deploy-shard-${index}-${randomBytes(3).toString('hex')}`,
      });
      containers.push(c);
    }
    await Promise.all(containers.map((c) => c.start()));
    const exits = await Promise.all(containers.map((c) => c.wait() as Promise<{ StatusCode: number }>));
    const seconds = (Date.now() - started) / 1000;
    const logs = await Promise.all(containers.map(logsOf));
    console.log(`      two shards as containers: ${seconds.toFixed(0)} s`);
    exits.forEach((e, i) => assert.equal(e.StatusCode, 0, `shard ${i} exited ${e.StatusCode}:\n${(logs[i] ?? '').slice(-4000)}`));
    if (server.failures[0]) throw server.failures[0];

    // Each pod wrote its own shard's file under its own folder.
    for (let i = 0; i < SHARDS; i++) {
      assert.deepEqual(fs.readdirSync(path.join(results, `shard-${i}`, 'records')).filter((f) => f.endsWith('.jsonl')), [`bench-shard-${i}-of-${SHARDS}.jsonl`]);
      assert.match(logs[i] ?? '', new RegExp(`bench: 2 run\\(s\\) in shard ${i}/${SHARDS}`));
    }

    const all = path.join(tmp, 'all.jsonl');
    const merge = ddbench(['records', 'merge', ...Array.from({ length: SHARDS }, (_, i) => path.join(results, `shard-${i}`, 'records')), '--into', all]);
    assert.equal(merge.status, 0, merge.stderr);
    const report = ddbench(['report', '--records', all, '--study', studyFile, '--json']);
    assert.equal(report.status, 0, report.stderr);
    const r = Report.parse(JSON.parse(report.stdout));

    const plan = planBench({ bugs: BUGS, models: [ORACLE_MODEL], conditions: [...CONDITIONS], repeats: 1 });
    assert.equal(r.counted, plan.length, 'every run of the plan is counted');
    assert.deepEqual(r.attempts.map((a) => `${a.bugId} ${a.group}`).sort(), plan.map((j) => `${j.bugId} ${j.model} · ${j.condition}`).sort(), 'each run once');
    const attempts = loadRecords([all]).attempts;
    assert.deepEqual(attempts.map((a) => a.bench?.key).sort(), plan.map((j) => j.key).sort());
    for (const a of attempts) {
      assert.equal(a.status, 'verified', `${a.bench?.key}: ${a.agent?.stopReason}`);
      for (const v of a.verifications) assert.equal(v.isolation, 'bwrap', `${a.bench?.key}: verified inside the container's bubblewrap sandbox`);
    }
    console.log(`      report: ${r.counted} run(s) counted, ${attempts.filter((a) => a.status === 'verified').length} verified, groups ${[...new Set(r.attempts.map((a) => a.group))].join(', ')}`);
    assert.ok(!allText(results).includes(KEY) && !logs.join('').includes(KEY), 'the API key is in no record, file or log');
  });

  it("without the pod's seccomp and /proc settings bubblewrap cannot sandbox in the container (why the Job asks for them)", async () => {
    const job = readJobManifest();
    const pod = podContainer(job, { image: image.ref, index: 0, configMaps: { 'ddbench-settings/endpoint': 'http://unused.invalid/v1' }, secrets: { 'api-key': 'unused' }, volumes: { study: os.tmpdir(), results: os.tmpdir() }, network: 'none', labels: { [RUN_LABEL]: 'deploy' } });
    const probe = ['bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--', '/usr/local/bin/node', '-e', 'console.log("sandboxed as pid " + process.pid)'];
    const run = async (hostConfig: Docker.HostConfig) => {
      const c = await docker.createContainer({ Image: image.ref, Cmd: probe, User: pod.User, Labels: pod.Labels, HostConfig: { ...hostConfig, NetworkMode: 'none' } });
      containers.push(c);
      await c.start();
      const { StatusCode } = (await c.wait()) as { StatusCode: number };
      return { code: StatusCode, log: await logsOf(c) };
    };
    const { Binds: _binds, NetworkMode: _network, ...settings } = pod.HostConfig ?? {};
    const withPodSettings = await run(settings);
    assert.equal(withPodSettings.code, 0, withPodSettings.log);
    assert.match(withPodSettings.log, /sandboxed as pid 2/);
    const { SecurityOpt, MaskedPaths: _m, ReadonlyPaths: _r, ...rest } = settings;
    const defaults = await run({ ...rest, SecurityOpt: (SecurityOpt ?? []).filter((o: string) => o !== 'seccomp=unconfined') });
    assert.notEqual(defaults.code, 0);
    assert.match(defaults.log, /bwrap: (No permissions to create new namespace|Can't mount proc)/);
  });

  it('leaves no container, network or image layer, and one cached CLI image', async () => {
    for (const c of containers.splice(0)) await c.remove({ force: true });
    await network?.remove();
    network = undefined;
    assert.deepEqual(await docker.listContainers({ all: true, filters: ours }), [], 'containers left behind');
    assert.deepEqual(await docker.listNetworks({ filters: ours }), [], 'networks left behind');
    assert.equal((await docker.listImages({ filters: ourDangling })).length, danglingBefore, 'image layers left behind');
    assert.equal((await docker.listImages({ filters: { reference: [`${CLI_REPO}:*`] } })).length, 1, 'one cached CLI image');
  });
});
