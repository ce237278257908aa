import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { CLI_PACKAGE_FILES, CLI_PACKAGE_TREES, PACKAGE_IN_IMAGE } from '../../src/core/cluster/docker/cli-image';
import { packageRoot } from '../../src/core/paths';
import { readStudyFile } from '../../src/core/study/study-file';
import { readJobManifest } from '../support/job-pod';

const ROOT = packageRoot();
const K8S = path.join(ROOT, 'deploy', 'k8s');

function kubectl(): string | undefined {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? r.stdout.split('\n')[0] : undefined;
}

type Doc = { kind: string; metadata: { name: string }; data?: Record<string, string> } & Record<string, unknown>;

/** `kubectl kustomize` of a folder, as parsed documents (kubectl's own kustomize: no cluster needed). */
function render(dir: string): Doc[] {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
}

/**
 * deploy/: the Job's manifest and kustomization, parsed with a real YAML parser and
 * checked field by field (and, where kubectl is installed, rendered by its kustomize);
 * the Dockerfile route copies exactly the package files the offline image holds.
 */
describe('deploy: the image recipe and the Kubernetes manifests', () => {
  it('the Job is an indexed job whose pods each run one shard of the study from the ConfigMap, into their own folder of the shared volume', () => {
    const job = readJobManifest();
    const pod = job.spec.template.spec;
    const [c] = pod.containers;
    assert.ok(c);
    assert.equal(job.spec.completionMode, 'Indexed');
    assert.equal(job.spec.completions, job.spec.parallelism);
    assert.deepEqual(c.command.slice(0, 2), ['sh', '-c']);
    assert.match(c.command[2] ?? '', /^exec ddbench bench --study \/study\/study\.json --shard "\$JOB_COMPLETION_INDEX\/\$DDBENCH_SHARDS" --out "\/results\/shard-\$JOB_COMPLETION_INDEX"$/);
    const env = new Map(c.env.map((e) => [e.name, e]));
    assert.equal(env.get('DDBENCH_SHARDS')?.value, String(job.spec.completions), 'the shard count is the number of completions');
    assert.deepEqual(env.get('OPENAI_BASE_URL')?.valueFrom, { configMapKeyRef: { name: 'ddbench-settings', key: 'endpoint' } });
    assert.equal(env.get('OPENAI_API_KEY')?.valueFrom?.secretKeyRef?.key, 'api-key');
    assert.ok(c.env.every((e) => e.name !== 'OPENAI_API_KEY' || e.value === undefined), 'the key only ever comes from a Secret');
    const mounts = new Map(c.volumeMounts.map((m) => [m.mountPath, m.name]));
    const volumes = new Map(pod.volumes.map((v) => [v.name, v]));
    assert.equal(volumes.get(mounts.get('/study') ?? '')?.configMap?.name, 'ddbench-study');
    assert.equal(volumes.get(mounts.get('/results') ?? '')?.persistentVolumeClaim?.claimName, 'ddbench-results');
    // What bubblewrap needs inside the pod (deploy/README.md), and nothing more: no added capability, no privilege escalation.
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile.type, 'Unconfined');
    assert.equal(c.securityContext.procMount, 'Unmasked');
    assert.equal(pod.hostUsers, false);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  });

  it("the kustomization's study file is a valid study that takes its endpoint and key from the Job, and its settings reach the Job", () => {
    const k = parse(fs.readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      components: string[];
      configMapGenerator: { name: string; files?: string[]; literals?: string[] }[];
      images: { name: string }[];
    };
    const settingsComponent = parse(fs.readFileSync(path.join(K8S, 'settings', 'kustomization.yaml'), 'utf8')) as {
      kind: string;
      replacements: { source: { name: string; fieldPath: string }; targets: { fieldPaths: string[] }[] }[];
    };
    assert.deepEqual(k.resources, ['base']);
    assert.deepEqual(k.components, ['settings']);
    assert.equal(settingsComponent.kind, 'Component');
    const base = parse(fs.readFileSync(path.join(K8S, 'base', 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const r of base.resources) assert.ok(fs.existsSync(path.join(K8S, 'base', r)), r);
    const study = k.configMapGenerator.find((g) => g.name === 'ddbench-study');
    assert.deepEqual(study?.files, ['study.json']);
    const s = readStudyFile(path.join(K8S, 'study.json'));
    assert.ok(s.models.every((m) => m.baseUrl === undefined && m.apiKeyEnv === undefined), 'models use the endpoint and key the Job gives');
    const settings = new Map((k.configMapGenerator.find((g) => g.name === 'ddbench-settings')?.literals ?? []).map((l) => l.split('=') as [string, string]));
    assert.deepEqual([...settings.keys()].sort(), ['endpoint', 'secretName', 'shards']);
    const targets = (key: string) => settingsComponent.replacements.filter((r) => r.source.name === 'ddbench-settings' && r.source.fieldPath === `data.${key}`).flatMap((r) => r.targets.flatMap((t) => t.fieldPaths));
    assert.deepEqual(targets('shards'), ['spec.completions', 'spec.parallelism', 'spec.template.spec.containers.[name=bench].env.[name=DDBENCH_SHARDS].value']);
    assert.deepEqual(targets('secretName'), ['spec.template.spec.containers.[name=bench].env.[name=OPENAI_API_KEY].valueFrom.secretKeyRef.name']);
    assert.deepEqual(k.images.map((i) => i.name), [readJobManifest().spec.template.spec.containers[0]?.image]);
  });

  it('kubectl kustomize renders the settings into the Job, and the restricted component into a default pod', function () {
    const version = kubectl();
    if (version === undefined) {
      console.log('      (kubectl is not installed: the kustomization is checked field by field only)');
      this.skip();
    }
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-kustomize-'));
    try {
      // An overlay as a user would write one: other settings, and the restricted component.
      fs.writeFileSync(path.join(tmp, 'study.json'), JSON.stringify({ v: 1, name: 'overlay', bugs: ['raftkv-lock-double-grant'], models: [{ name: 'm' }] }));
      const rel = path.relative(tmp, K8S);
      fs.writeFileSync(
        path.join(tmp, 'kustomization.yaml'),
        [
          `resources: [${rel}/base]`,
          `components: [${rel}/settings, ${rel}/restricted]`,
          'configMapGenerator:',
          '  - { name: ddbench-study, files: [study.json] }',
          '  - { name: ddbench-settings, literals: [endpoint=http://vllm.models:8000/v1, secretName=vllm-key, shards=5] }',
          'images: [{ name: ddbench, newName: registry.local/ddbench, newTag: abc }]',
          '',
        ].join('\n'),
      );
      const docs = render(tmp);
      const job = docs.find((d) => d.kind === 'Job') as unknown as ReturnType<typeof readJobManifest>;
      const cms = docs.filter((d) => d.kind === 'ConfigMap');
      const pod = job.spec.template.spec;
      const [c] = pod.containers;
      assert.ok(c);
      assert.equal(job.spec.completions, 5);
      assert.equal(job.spec.parallelism, 5);
      const env = new Map(c.env.map((e) => [e.name, e]));
      assert.equal(env.get('DDBENCH_SHARDS')?.value, '5');
      assert.equal(env.get('OPENAI_API_KEY')?.valueFrom?.secretKeyRef?.name, 'vllm-key');
      const settings = cms.find((d) => d.metadata.name === env.get('OPENAI_BASE_URL')?.valueFrom?.configMapKeyRef?.name);
      assert.equal(settings?.data?.endpoint, 'http://vllm.models:8000/v1', 'the endpoint ConfigMap, under its generated name');
      const studyCm = cms.find((d) => d.metadata.name === pod.volumes.find((v) => v.name === 'study')?.configMap?.name);
      assert.match(studyCm?.data?.['study.json'] ?? '', /"overlay"/);
      assert.equal(c.image, 'registry.local/ddbench:abc');
      assert.equal(pod.hostUsers, undefined);
      assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
      assert.equal(c.securityContext.procMount, undefined);

      const shipped = render(K8S);
      const shippedJob = shipped.find((d) => d.kind === 'Job') as unknown as ReturnType<typeof readJobManifest>;
      assert.deepEqual(shipped.map((d) => d.kind).sort(), ['ConfigMap', 'ConfigMap', 'Job', 'PersistentVolumeClaim']);
      assert.equal(shippedJob.spec.template.spec.securityContext.seccompProfile.type, 'Unconfined');
      assert.equal(shippedJob.spec.completions, 2);
      assert.equal(shippedJob.spec.template.spec.containers[0]?.env.find((e) => e.name === 'OPENAI_API_KEY')?.valueFrom?.secretKeyRef?.name, 'llm-api');
      assert.equal(shippedJob.spec.template.spec.containers[0]?.image, 'registry.example/ddbench:0.1.0');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('the Dockerfile copies the package to where the offline image has it, and .dockerignore lets in exactly its files', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
    assert.match(dockerfile, new RegExp(`^COPY \\. ${PACKAGE_IN_IMAGE}/$`, 'm'));
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:20-/m);
    assert.match(dockerfile, /apt-get install -y --no-install-recommends bubblewrap/);
    assert.match(dockerfile, /^USER node$/m);
    const allowed = fs
      .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1));
    const expected = [...CLI_PACKAGE_FILES, 'dist/media/*.js', 'dist/media/*.css', 'bugs'];
    assert.deepEqual(allowed, expected);
    assert.deepEqual(
      CLI_PACKAGE_TREES.map((t) => t.dir),
      ['dist/media', 'bugs'],
    );
  });
});
