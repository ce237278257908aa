/**
 * The pod of deploy/k8s/job.yaml as a Docker container: its command, environment
 * variables, volume mounts, user, security settings and limits, read from the manifest
 * so the rehearsal on Docker cannot drift from what the Job runs. A field of the pod
 * this translation does not know fails loudly rather than being left out; the two it
 * knows Docker cannot give a single container (the pod's user namespace and fsGroup)
 * are named in `notReproduced`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { parse } from 'yaml';
import { z } from 'zod';
import { packageRoot } from '../../src/core/paths';

export const JOB_MANIFEST = path.join(packageRoot(), 'deploy', 'k8s', 'base', 'job.yaml');

const EnvVar = z.strictObject({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .strictObject({
      configMapKeyRef: z.strictObject({ name: z.string(), key: z.string() }).optional(),
      secretKeyRef: z.strictObject({ name: z.string(), key: z.string() }).optional(),
    })
    .optional(),
});

const Container = z.strictObject({
  name: z.string(),
  image: z.string(),
  command: z.array(z.string()),
  env: z.array(EnvVar),
  securityContext: z.strictObject({
    allowPrivilegeEscalation: z.boolean(),
    capabilities: z.strictObject({ drop: z.array(z.string()) }),
    procMount: z.enum(['Default', 'Unmasked']).optional(),
  }),
  resources: z.strictObject({
    requests: z.strictObject({ cpu: z.string(), memory: z.string() }),
    limits: z.strictObject({ cpu: z.string(), memory: z.string() }),
  }),
  volumeMounts: z.array(z.strictObject({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() })),
});

export const JobManifest = z.strictObject({
  apiVersion: z.literal('batch/v1'),
  kind: z.literal('Job'),
  metadata: z.strictObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.strictObject({
    completionMode: z.literal('Indexed'),
    completions: z.number().int(),
    parallelism: z.number().int(),
    backoffLimitPerIndex: z.number().int(),
    maxFailedIndexes: z.number().int(),
    template: z.strictObject({
      metadata: z.strictObject({ labels: z.record(z.string(), z.string()) }),
      spec: z.strictObject({
        restartPolicy: z.literal('Never'),
        hostUsers: z.boolean().optional(),
        securityContext: z.strictObject({
          runAsNonRoot: z.boolean(),
          runAsUser: z.number().int(),
          runAsGroup: z.number().int(),
          fsGroup: z.number().int(),
          seccompProfile: z.strictObject({ type: z.enum(['Unconfined', 'RuntimeDefault']) }),
        }),
        containers: z.array(Container).length(1),
        volumes: z.array(
          z.strictObject({
            name: z.string(),
            configMap: z.strictObject({ name: z.string() }).optional(),
            persistentVolumeClaim: z.strictObject({ claimName: z.string() }).optional(),
          }),
        ),
      }),
    }),
  }),
});
export type JobManifest = z.infer<typeof JobManifest>;

export function readJobManifest(file = JOB_MANIFEST): JobManifest {
  return JobManifest.parse(parse(fs.readFileSync(file, 'utf8')));
}

export interface PodRehearsal {
  image: string;
  /** The Job's completion index (Kubernetes puts it in JOB_COMPLETION_INDEX). */
  index: number;
  /** Values of the ConfigMap keys the environment names (`configmap/key`). */
  configMaps: Record<string, string>;
  /** Values of the Secret keys the environment names (by key; the Secret's name is the kustomization's). */
  secrets: Record<string, string>;
  /** Host folders standing in for the pod's volumes, by volume name. */
  volumes: Record<string, string>;
  network: string;
  labels: Record<string, string>;
}

/** What Docker cannot give one container of what the pod asks for, said in the test's output. */
export function notReproduced(job: JobManifest): string[] {
  const pod = job.spec.template.spec;
  return [
    ...(pod.hostUsers === false ? ['hostUsers: false (a user namespace per pod; Docker maps users per daemon, not per container)'] : []),
    `fsGroup: ${pod.securityContext.fsGroup} (the host folders are made the pod user's instead)`,
  ];
}

function bytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!m) throw new Error(`memory quantity ${quantity} is not translated`);
  const unit: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  return Number(m[1]) * (unit[m[2] ?? ''] ?? 1);
}

function nanoCpus(quantity: string): number {
  const m = /^(\d+)(m)?$/.exec(quantity);
  if (!m) throw new Error(`cpu quantity ${quantity} is not translated`);
  return (Number(m[1]) * 1e9) / (m[2] ? 1000 : 1);
}

/** The container the pod of `index` is, on Docker: same command, environment names, mounts, user and security settings. */
export function podContainer(job: JobManifest, r: PodRehearsal): Docker.ContainerCreateOptions {
  const pod = job.spec.template.spec;
  const c = pod.containers[0];
  if (c === undefined) throw new Error('the Job has no container');
  const env = [`JOB_COMPLETION_INDEX=${r.index}`];
  for (const e of c.env) {
    const cm = e.valueFrom?.configMapKeyRef;
    const secret = e.valueFrom?.secretKeyRef;
    const value = e.value ?? (cm ? r.configMaps[`${cm.name}/${cm.key}`] : secret ? r.secrets[secret.key] : undefined);
    if (value === undefined) throw new Error(`no value for the pod's ${e.name} (${JSON.stringify(e.valueFrom)})`);
    env.push(`${e.name}=${value}`);
  }
  const binds = c.volumeMounts.map((m) => {
    const host = r.volumes[m.name];
    if (host === undefined) throw new Error(`no host folder for the pod's volume ${m.name}`);
    return `${host}:${m.mountPath}${m.readOnly === true ? ':ro' : ''}`;
  });
  const sc = c.securityContext;
  const securityOpt = [
    ...(pod.securityContext.seccompProfile.type === 'Unconfined' ? ['seccomp=unconfined'] : []),
    ...(sc.allowPrivilegeEscalation ? [] : ['no-new-privileges']),
  ];
  return {
    Image: r.image,
    Cmd: c.command,
    Env: env,
    User: `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
    Labels: r.labels,
    HostConfig: {
      Binds: binds,
      CapDrop: sc.capabilities.drop,
      SecurityOpt: securityOpt,
      // procMount: Unmasked is the CLI's --security-opt systempaths=unconfined: no masked or read-only /proc paths.
      ...(sc.procMount === 'Unmasked' && { MaskedPaths: [], ReadonlyPaths: [] }),
      NanoCpus: nanoCpus(c.resources.limits.cpu),
      Memory: bytes(c.resources.limits.memory),
      NetworkMode: r.network,
    },
  };
}
