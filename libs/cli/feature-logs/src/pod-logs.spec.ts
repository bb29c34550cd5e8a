import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode } from '@podmin/util-errors';
import { followPodLogs } from './follow';
import {
  currentLogFiles,
  findPodLogSources,
  linePrefix,
  readPodLogs,
  type PodLogQuery,
  type SourcedLine,
} from './pod-logs';

/** A node as the agent and kubelet leave it: static Pod manifests and CRI log directories. */
function node(): { root: string; query: PodLogQuery } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-logs-'));
  const manifestsDir = path.join(root, 'etc/podmin/manifests');
  const podLogDir = path.join(root, 'var/log/pods');
  fs.mkdirSync(manifestsDir, { recursive: true });
  fs.mkdirSync(podLogDir, { recursive: true });
  return {
    root,
    query: { manifestsDir, podLogDir, nodeName: 'Default', nodegroup: 'default', name: 'web' },
  };
}

function staticPod(q: PodLogQuery, name: string, deployment: string, containers: string[]): void {
  fs.writeFileSync(
    path.join(q.manifestsDir, `${name}.yaml`),
    [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      `  name: ${name}`,
      '  namespace: product',
      '  annotations:',
      `    podmin.dev/deployment: ${deployment}`,
      'spec:',
      '  initContainers:',
      '    - name: setup',
      '      image: x',
      '  containers:',
      ...containers.flatMap((c) => [`    - name: ${c}`, '      image: x']),
      '',
    ].join('\n'),
  );
}

function logDir(q: PodLogQuery, pod: string, uid: string, container: string): string {
  const dir = path.join(q.podLogDir, `product_${pod}-default_${uid}`, container);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const at = (s: number) => new Date(Date.UTC(2026, 11, 3, 10, 0, s)).toISOString();
const rec = (s: number, text: string, flag = 'F', stream = 'stdout') =>
  `${at(s)} ${stream} ${flag} ${text}\n`;

describe('finding a deployment’s Pod logs on a node', () => {
  it('finds every Pod the agent wrote for the deployment (two during a surge) and no other', async () => {
    const { query } = node();
    staticPod(query, 'web', 'default/web', ['app', 'sidecar']);
    staticPod(query, 'web-1a2b3c4d', 'default/web', ['app', 'sidecar']);
    staticPod(query, 'web-api', 'default/web-api', ['app']);
    staticPod(query, 'other', 'edge/web', ['app']);
    fs.writeFileSync(path.join(query.manifestsDir, '.web.yaml.tmp'), 'broken: [');
    logDir(query, 'web', 'u1', 'app');
    logDir(query, 'web-1a2b3c4d', 'u2', 'app');
    logDir(query, 'web-api', 'u3', 'app');
    const all = await findPodLogSources(query);
    expect(all.map((s) => `${s.pod}/${s.container}`)).toEqual([
      'web-1a2b3c4d/app',
      'web-1a2b3c4d/sidecar',
      'web/app',
      'web/sidecar',
    ]);
    expect(all[2]?.dir).toBe(path.join(query.podLogDir, 'product_web-default_u1', 'app'));
    const one = await findPodLogSources({ ...query, container: 'setup' });
    expect(one.map((s) => `${s.pod}/${s.container}`)).toEqual(['web-1a2b3c4d/setup', 'web/setup']);
  });

  it('reads only the directory written last when an earlier Pod of the same name left one', async () => {
    const { query } = node();
    staticPod(query, 'web', 'default/web', ['app']);
    const old = logDir(query, 'web', 'olduid', 'app');
    fs.writeFileSync(path.join(old, '0.log'), rec(1, 'an earlier Pod'));
    const past = new Date(Date.now() - 3600_000);
    fs.utimesSync(path.join(old, '0.log'), past, past);
    const current = logDir(query, 'web', 'newuid', 'app');
    fs.writeFileSync(path.join(current, '0.log'), rec(2, 'the current Pod'));
    const sources = await findPodLogSources(query);
    expect(sources.map((s) => s.dir)).toEqual([current]);
    expect((await readPodLogs(sources)).map((l) => linePrefix(l.source, sources) + l.text)).toEqual(
      ['the current Pod'],
    );
  });

  it('names the node when it runs no Pod of the deployment, and the containers a Pod has', async () => {
    const { query } = node();
    await expect(findPodLogSources(query)).rejects.toThrow(
      'reading logs of default/web: node Default runs no Pod of it',
    );
    staticPod(query, 'web', 'default/web', ['app']);
    const err: unknown = await findPodLogSources({ ...query, container: 'ap' }).catch(
      (e: unknown) => e,
    );
    expect(hasCode(err, 'NOT_FOUND')).toBe(true);
    expect((err as Error).message).toContain('Pod web has no container "ap"');
    expect((err as { hint?: string }).hint).toBe('Its containers: app, setup (init).');
  });
});

describe('reading CRI log files', () => {
  it('reads the current instance only, rotated files first, rejoining partial lines', async () => {
    const { query } = node();
    staticPod(query, 'web', 'default/web', ['app']);
    const dir = logDir(query, 'web', 'u1', 'app');
    fs.writeFileSync(path.join(dir, '0.log'), rec(1, 'before the restart'));
    fs.writeFileSync(path.join(dir, '1.log.20261203-100005'), rec(2, 'one ', 'P') + rec(3, 'line'));
    fs.writeFileSync(path.join(dir, '1.log.20261203-100001.gz'), 'not text');
    fs.writeFileSync(path.join(dir, '1.log'), rec(4, 'live', 'F', 'stderr'));
    expect((await currentLogFiles(dir)).map((f) => path.basename(f))).toEqual([
      '1.log.20261203-100005',
      '1.log',
    ]);
    const sources = await findPodLogSources(query);
    const lines = await readPodLogs(sources);
    expect(lines.map((l) => [l.text, l.stream])).toEqual([
      ['one line', 'stdout'],
      ['live', 'stderr'],
    ]);
    expect((await readPodLogs(sources, { tail: 1 })).map((l) => l.text)).toEqual(['live']);
    expect((await readPodLogs(sources, { tail: 0 })).map((l) => l.text)).toEqual([]);
    const since = Date.parse(at(3));
    expect((await readPodLogs(sources, { sinceMs: since })).map((l) => l.text)).toEqual(['live']);
  });

  it('merges several containers by time and prefixes each line with its Pod and container', async () => {
    const { query } = node();
    staticPod(query, 'web', 'default/web', ['app', 'sidecar']);
    fs.writeFileSync(
      path.join(logDir(query, 'web', 'u1', 'app'), '0.log'),
      rec(1, 'a1') + rec(3, 'a3'),
    );
    fs.writeFileSync(path.join(logDir(query, 'web', 'u1', 'sidecar'), '0.log'), rec(2, 's2'));
    const sources = await findPodLogSources(query);
    const lines = await readPodLogs(sources, { tail: 5 });
    expect(lines.map((l) => linePrefix(l.source, sources) + l.text)).toEqual([
      '[web/app] a1',
      '[web/sidecar] s2',
      '[web/app] a3',
    ]);
    expect(linePrefix(sources[0]!, [sources[0]!])).toBe('');
  });
});

describe('following CRI log files', () => {
  it('prints what exists, then new lines across a rotation, a restart and a new Pod', async () => {
    const { query } = node();
    staticPod(query, 'web', 'default/web', ['app']);
    const dir = logDir(query, 'web', 'u1', 'app');
    const live = path.join(dir, '0.log');
    fs.writeFileSync(live, rec(1, 'old') + rec(2, 'kept'));
    const got: SourcedLine[] = [];
    const stop = new AbortController();
    const waitFor = async (n: number): Promise<void> => {
      for (let i = 0; i < 200 && got.length < n; i++) await new Promise((r) => setTimeout(r, 10));
      expect(got.length).toBeGreaterThanOrEqual(n);
    };
    const following = followPodLogs(await findPodLogSources(query), {
      signal: stop.signal,
      tail: 1,
      pollMs: 10,
      rescanMs: 20,
      rescan: () => findPodLogSources(query),
      onLine: (l) => got.push(l),
    });
    await waitFor(1);
    // A line written in two appends, the first without its newline.
    fs.appendFileSync(live, `${at(3)} stdout F spl`);
    await new Promise((r) => setTimeout(r, 50));
    fs.appendFileSync(live, 'it\n' + rec(4, 'first ', 'P'));
    fs.appendFileSync(live, rec(5, 'joined'));
    await waitFor(3);
    // kubelet rotates: the old file is renamed (a last line lands in it first), a new one starts.
    fs.appendFileSync(live, rec(6, 'last before rotation'));
    fs.renameSync(live, `${live}.20261203-100006`);
    fs.writeFileSync(live, rec(7, 'after rotation'));
    await waitFor(5);
    // The container restarts: kubelet writes 1.log.
    fs.writeFileSync(path.join(dir, '1.log'), rec(8, 'restarted'));
    await waitFor(6);
    // A rollout starts a second Pod.
    staticPod(query, 'web-1a2b3c4d', 'default/web', ['app']);
    fs.writeFileSync(
      path.join(logDir(query, 'web-1a2b3c4d', 'u2', 'app'), '0.log'),
      rec(9, 'surge'),
    );
    await waitFor(7);
    stop.abort();
    await following;
    expect(got.map((l) => `${l.source.pod}:${l.text}`)).toEqual([
      'web:kept',
      'web:split',
      'web:first joined',
      'web:last before rotation',
      'web:after rotation',
      'web:restarted',
      'web-1a2b3c4d:surge',
    ]);
  });
});
