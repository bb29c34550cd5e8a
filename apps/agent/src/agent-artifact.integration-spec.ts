// The agent artifact (`nx run agent:artifact`, which this target depends on) is everything a
// node installs of podmin: this spec fails when a program the supervisor spawns, or a file one
// of them loads at run time, is not in it, reading the expectations from the code that spawns
// and loads them rather than from the bundler's own list.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAgentArgs, serviceSpecs } from '@podmin/agent-feature-supervisor';
import { UDP_WORKER_BUNDLE } from '@podmin/agent-feature-dns';
import { type BuiltAgent, localAgentFlags, waitFor } from '@podmin/testing';
import { makeLocalNode, startLocalAgent } from './__fixtures__/local-node';

const REPO = path.resolve(__dirname, '../../..');
const VERSION = (
  JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }
).version;
const ARTIFACT = path.join(REPO, `dist/artifact/podmin-agent-v${VERSION}.tar.gz`);

/** Every .proto under `dir`, relative to it. */
function protos(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) =>
      d.isDirectory()
        ? protos(path.join(dir, d.name), `${prefix}${d.name}/`)
        : d.name.endsWith('.proto')
          ? [`${prefix}${d.name}`]
          : [],
    );
}

describe('the podmin-agent artifact', () => {
  const entries = () =>
    execFileSync('tar', ['-tzf', ARTIFACT], { encoding: 'utf8' })
      .split('\n')
      .filter((e) => e !== '' && !e.endsWith('/'));

  it('holds every service program the supervisor spawns and every file they load', () => {
    const listed = new Set(entries());
    const config = parseAgentArgs(localAgentFlags, { PODMIN_NODE_ROOT: '/n' });
    if (typeof config === 'string') throw new Error('expected a run configuration');
    const expected = [
      'podmin-agent.cjs',
      ...serviceSpecs(config, '/opt/podmin/agent').map((s) => path.basename(s.script)),
      // agent-dns's worker thread, loaded beside its bundle (libs/agent/feature-dns).
      UDP_WORKER_BUNDLE,
      // The eBPF objects agent-dataplane loads from bpf/ beside its bundle.
      ...fs
        .readdirSync(path.join(REPO, 'bpf/obj'))
        .filter((n) => n.endsWith('.o'))
        .map((n) => `bpf/${n}`),
      // koffi's native module for both node architectures (one artifact serves both).
      'koffi/linux_x64/koffi.node',
      'koffi/linux_arm64/koffi.node',
      // The contracts every gRPC process loads, and the standard health service's.
      ...protos(path.join(REPO, 'libs/agent/contracts/proto')).map((p) => `proto/${p}`),
      'proto/health/v1/health.proto',
    ];
    expect(serviceSpecs(config, '/x').length).toBeGreaterThanOrEqual(6);
    expect(expected.filter((e) => !listed.has(e))).toEqual([]);
  });

  it('is laid out flat with fixed owners and times, so user-data extracts it as /opt/podmin/agent', () => {
    const verbose = execFileSync('tar', ['--numeric-owner', '-tvzf', ARTIFACT], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter((l) => l !== '');
    expect(verbose.length).toBeGreaterThan(10);
    for (const line of verbose) expect(line).toMatch(/ 0\/0 .* 1970-01-01 00:00 [^/]/);
    const names = verbose.map((l) => l.slice(l.lastIndexOf(' ') + 1));
    expect(names).toEqual([...names].sort());
  });

  it('runs from where it is extracted: the supervisor starts every service and is healthy', async () => {
    const node = await makeLocalNode('podmin-artifact');
    const agentDir = node.subdir('agent');
    execFileSync('tar', ['-xzf', ARTIFACT, '-C', agentDir]);
    let agent: BuiltAgent | undefined;
    try {
      const started = await startLocalAgent(node, {
        program: path.join(agentDir, 'podmin-agent.cjs'),
      });
      agent = started.agent;
      const { health, registry } = started.ports;
      const running = agent;
      const healthy = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${health}/healthz`).catch(() => undefined);
          return res?.status === 200 ? true : undefined;
        },
        'the extracted agent to be healthy',
        45_000,
      ).catch(() => false);
      expect({ healthy, log: healthy ? '' : running.tail(30) }).toEqual({ healthy: true, log: '' });
      // The registry's HTTP listener may bind a moment after its process reports healthy.
      const v2 = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${registry}/v2/`).catch(() => undefined);
          return res?.status;
        },
        'the registry to answer /v2/',
        15_000,
      );
      expect(v2).toBe(200);
    } finally {
      await agent?.stop();
      node.cleanup();
    }
  }, 90_000);
});
