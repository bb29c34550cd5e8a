// The per-node part of bench/rollout.mjs (`--node`): a surge rollout on the demo node, measured
// from inside the client Pod.
import fs from 'node:fs';
import path from 'node:path';
import { killAtCleanup, result } from './bench.mjs';
import { PODMIN_BIN, deployWebArgs } from './cli.mjs';

/**
 * The per-node part of the rollout budgets (DESIGN §8), on the demo node `npm run demo` leaves
 * running (its XDG directories under tmp/demo, or the XDG_* variables the demo prints): requests
 * from inside the client Pod's network namespace to web's VIP every 50 ms (at most 2,400) while
 * `deploy web --image hello:<new tag> --wait` rolls out a new revision of the image already in
 * the registry (the demo's hello:v1, pushed under a new tag). Budgets: 0 failed requests; from
 * the node applying the revision (agent-staticpod publishing its Pod, from the agent's log) to
 * the new Pod answering through the Service (its host name in the reply) ≤ 5 s. Needs root (it
 * enters the Pod's network namespace). Returns whether both budgets held.
 */
export async function nodeBench() {
  const { execFileSync, spawn, spawnSync } = await import('node:child_process');
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
  const demo = path.join(root, 'tmp/demo');
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME ?? path.join(demo, 'config'),
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? path.join(demo, 'cache'),
    XDG_DATA_HOME: process.env.XDG_DATA_HOME ?? path.join(demo, 'data'),
  };
  const nodeRoot = path.join(env.XDG_DATA_HOME, 'podmin/nodes/demo/default');
  const stackFile = path.join(nodeRoot, 'run/podmin/stack.json');
  const manifest = path.join(demo, 'work/web/daemonset.yaml');
  if (process.getuid?.() !== 0)
    throw new Error('--node needs root (it enters a Pod network namespace)');
  if (!fs.existsSync(stackFile) || !fs.existsSync(manifest))
    throw new Error(
      `--node needs the running demo node (npm run demo): ${stackFile} or ${manifest} is missing`,
    );
  const podmin = (...a) =>
    execFileSync(process.execPath, [PODMIN_BIN, ...a], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const stack = JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  const socket = path.join(
    fs.realpathSync(path.join(nodeRoot, 'run/containerd')),
    'containerd.sock',
  );
  const crictl = (...a) =>
    execFileSync(stack.crictl, ['--runtime-endpoint', `unix://${socket}`, ...a], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  const vip = JSON.parse(podmin('list', '-o', 'json')).find((r) => r.name === 'web')?.vip;
  if (!vip) throw new Error('web has no Service VIP in `podmin list`');
  const sandbox = crictl('pods', '--name', 'client', '--state', 'Ready', '-q')
    .trim()
    .split('\n')[0];
  if (!sandbox) throw new Error('the demo client Pod is not running');
  const netns = JSON.parse(crictl('inspectp', sandbox)).info.runtimeSpec.linux.namespaces.find(
    (n) => n.type === 'network',
  ).path;
  const tag = `bench-${Date.now()}`;
  podmin('push', 'hello:v1', `hello:${tag}`);

  const get = () => {
    const r = spawnSync(
      'nsenter',
      [`--net=${netns}`, 'curl', '-fs', '-g', '--max-time', '3', `http://[${vip}]/`],
      {
        encoding: 'utf8',
      },
    );
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  /** Requests every 50 ms until `done()`, each with its time and how long it took. */
  const requestLoop = async (done) => {
    const out = [];
    for (let i = 0; i < 2400 && !done(); i++) {
      const t0 = Date.now();
      const body = get();
      out.push({ ms: Date.now(), took: Date.now() - t0, body });
      await new Promise((r) => setTimeout(r, 50));
    }
    return out;
  };
  const slowOf = (rs) => rs.filter((r) => r.body !== undefined && r.took >= 900).length;
  // The VIP's own rate of slow connections, without a rollout, to compare with.
  const baselineEnd = Date.now() + 10_000;
  const baseline = await requestLoop(() => Date.now() >= baselineEnd);
  const before = get();
  if (before === undefined) throw new Error(`web's VIP ${vip} does not answer from the client Pod`);
  const oldHost = before.split(' from ').at(-1);
  let stop = false;
  const loop = requestLoop(() => stop);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 1000));
  // The deploy runs beside the request loop (a child process, awaited without blocking it).
  const deploy = await new Promise((resolve) => {
    const child = killAtCleanup(
      spawn(
        process.execPath,
        [PODMIN_BIN, ...deployWebArgs(`hello:${tag}`, '-f', manifest, '--wait', '--timeout', '3m')],
        { env, stdio: ['ignore', 'ignore', 'pipe'] },
      ),
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stderr }));
  });
  await new Promise((r) => setTimeout(r, 3000));
  stop = true;
  const results = await loop;
  if (deploy.status !== 0) throw new Error(`deploy --wait failed: ${deploy.stderr}`);
  const log = fs.readFileSync(path.join(nodeRoot, 'var/log/podmin-agent.log'), 'utf8').split('\n');
  let appliedMs;
  for (const l of log) {
    if (!l.startsWith('{')) continue;
    const o = JSON.parse(l);
    const t = Date.parse(o.time);
    if (
      o.service === 'agent-staticpod' &&
      o.msg === 'reconcile' &&
      /^published [1-9]/.test(o.result ?? '') &&
      t >= started
    ) {
      appliedMs = t;
      break;
    }
  }
  const failed = results.filter((r) => r.body === undefined).length;
  const firstNew = results.find(
    (r) => r.body !== undefined && r.body.split(' from ').at(-1) !== oldHost,
  );
  const servingMs =
    appliedMs !== undefined && firstNew !== undefined ? firstNew.ms - appliedMs : undefined;
  const okFailed = failed === 0;
  const okServing = servingMs !== undefined && servingMs <= 5000;
  console.log(
    `node: ${results.length} requests every 50 ms through web's VIP during the surge rollout to hello:${tag}: ${failed} failed within 3 s (budget 0) ${okFailed ? 'OK' : 'OVER BUDGET'}; ${slowOf(results)} slower than 0.9 s (without a rollout: ${slowOf(baseline)} of ${baseline.length})`,
  );
  console.log(
    `node: applied → new Pod serving ${servingMs ?? 'never'} ms (budget 5000), ratio ${servingMs === undefined ? '-' : (servingMs / 5000).toFixed(2)} ${okServing ? 'OK' : 'OVER BUDGET'}`,
  );
  result({
    figure: `node: failed requests during a surge rollout: ${failed}`,
    anchor: '0 requests',
    ratio: failed,
    max: 0,
  });
  if (servingMs !== undefined) {
    result({
      figure: `node: applied → new Pod serving ${servingMs} ms`,
      anchor: '5000 ms',
      ratio: servingMs / 5000,
      max: 1,
    });
  }
  return okFailed && okServing;
}
