import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { JsonLogger } from '@podmin/agent-util-logging';
import { itIf } from '@podmin/testing';
import { startHealthServer } from './health-server';
import { SHORT_SLICE_NS } from './scheduling';
import {
  FAST_EXEC_ARGV,
  LEAN_ENV,
  SERVICE_ENV,
  SERVICE_EXEC_ARGV,
  serviceEnv,
  serviceExecArgv,
} from './launcher';
import { Supervisor, type ServiceSpec } from './supervisor';

/** Whether the running kernel's release is at least major.minor. */
function kernelAtLeast(major: number, minor: number): boolean {
  const [a = 0, b = 0] = os
    .release()
    .split('.')
    .map((n) => parseInt(n, 10));
  return a > major || (a === major && b >= minor);
}

const fixture = path.join(__dirname, '__fixtures__', 'service.cjs');
const spec = (name: string, mode: string, stopOrder: number): ServiceSpec => ({
  name,
  script: fixture,
  args: [mode],
  stopOrder,
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function capture() {
  const out = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  out.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  // Every line, repeats too: these tests read each restart's warning (JsonLogger folds them).
  const log = new JsonLogger({ service: 'test', write: (l) => out.write(l), repeatWindowMs: 0 });
  return { log, lines };
}

describe('Supervisor', () => {
  it('pauses after a service with its reason, and logs each stop, in order with timestamps', async () => {
    const { log, lines } = capture();
    const supervisor = new Supervisor(
      [
        spec('last', 'ready', 3),
        { ...spec('first', 'ready', 1), pauseAfterStop: { ms: 300, why: 'wait margin' } },
        spec('second', 'ready', 2),
      ],
      log,
    );
    supervisor.start();
    await until(() => supervisor.ready(), 'readiness');
    await supervisor.stop();
    const events = lines
      .filter((l) => ['stop service', 'service stopped', 'wait margin'].includes(String(l['msg'])))
      .map((l) => `${String(l['msg'])} ${String(l['after'] ?? l['service'])}`);
    expect(events).toEqual([
      'stop service first',
      'service stopped first',
      'wait margin first',
      'stop service second',
      'service stopped second',
      'stop service last',
      'service stopped last',
    ]);
    const at = (msg: string, name: string) =>
      Date.parse(
        String(
          lines.find((l) => l['msg'] === msg && (l['after'] ?? l['service']) === name)?.['time'],
        ),
      );
    expect(at('stop service', 'second') - at('wait margin', 'first')).toBeGreaterThanOrEqual(290);
    expect(lines.find((l) => l['msg'] === 'service stopped')).toMatchObject({ exit: 'code 0' });
  });

  it('starts services, reports readiness over HTTP and stops them in order', async () => {
    const { log, lines } = capture();
    const supervisor = new Supervisor(
      [{ ...spec('b', 'ready', 2), memory: 'lean', nice: 10 }, spec('a', 'ready', 1)],
      log,
    );
    const server = await startHealthServer(supervisor, 0);
    try {
      expect((await fetch(`http://127.0.0.1:${server.port}/readyz`)).status).toBe(503);
      supervisor.start();
      await until(() => supervisor.ready(), 'readiness');
      const ready = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      expect(ready.status).toBe(200);
      const services = ((await ready.json()) as { services: Array<{ name: string; pid: number }> })
        .services;
      expect(services).toHaveLength(2);
      // A niced service runs at its priority; the others at the supervisor's.
      const pid = (name: string) => services.find((s) => s.name === name)?.pid ?? 0;
      expect(os.getPriority(pid('b'))).toBe(10);
      // Every thread of it, V8's helper threads included (niceness is per thread on Linux).
      const threads = fs.readdirSync(`/proc/${pid('b')}/task`).map(Number);
      expect(threads.length).toBeGreaterThan(1);
      expect(threads.map((tid) => os.getPriority(tid))).toEqual(threads.map(() => 10));
      expect(os.getPriority(pid('a'))).toBe(os.getPriority());
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
      expect(
        (await fetch(`http://127.0.0.1:${server.port}/healthz`, { method: 'POST' })).status,
      ).toBe(405);
      await supervisor.stop();
      expect(supervisor.statuses().map((s) => s.state)).toEqual(['stopped', 'stopped']);
      const stops = lines.filter((l) => l['msg'] === 'stop service').map((l) => l['service']);
      expect(stops).toEqual(['a', 'b']);
      // Child JSON lines pass through unchanged; plain lines are wrapped as JSON.
      expect(lines.some((l) => l['component'] === 'fixture')).toBe(true);
      // Every service process starts with the shared memory settings; a lean one adds lite
      // mode and eager glibc trimming. Lines arrive in either order, so compare by mode.
      const started = lines.filter((l) => l['msg'] === 'started');
      const byLite = (lite: boolean) =>
        started.find((l) => (l['execArgv'] as string[]).includes('--lite-mode') === lite);
      expect(byLite(false)).toMatchObject({
        execArgv: [...SERVICE_EXEC_ARGV, ...FAST_EXEC_ARGV],
        malloc: { MALLOC_ARENA_MAX: '2' },
      });
      expect(byLite(true)).toMatchObject({
        execArgv: [...SERVICE_EXEC_ARGV, '--lite-mode', '--no-expose-wasm'],
        malloc: {
          MALLOC_ARENA_MAX: '2',
          MALLOC_MMAP_THRESHOLD_: '65536',
          MALLOC_TRIM_THRESHOLD_: '65536',
        },
      });
      // Nothing of the lean profile leaks into a fast process.
      expect(byLite(false)?.['malloc']).toEqual({ MALLOC_ARENA_MAX: '2' });
      expect(lines.some((l) => l['line'] === 'plain text line')).toBe(true);
    } finally {
      await supervisor.stop();
      await server.close();
    }
  });

  it('stops a service that ignores SIGTERM and SIGINT by its stop word, in order and at once', async () => {
    const { log, lines } = capture();
    const supervisor = new Supervisor(
      [spec('first', 'supervised', 1), spec('second', 'supervised', 2)],
      log,
    );
    supervisor.start();
    try {
      await until(() => supervisor.ready(), 'readiness');
      // What a group signal delivers to every process: it must stop none of them.
      for (const s of supervisor.statuses()) {
        process.kill(s.pid ?? 0, 'SIGTERM');
        process.kill(s.pid ?? 0, 'SIGINT');
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(supervisor.statuses().map((s) => s.state)).toEqual(['running', 'running']);
      const started = Date.now();
      await supervisor.stop();
      // Far below STOP_GRACE_MS: the word stopped them, not the SIGKILL after the grace.
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(
        lines.filter((l) => l['msg'] === 'service stopped').map((l) => [l['service'], l['exit']]),
      ).toEqual([
        ['first', 'code 0'],
        ['second', 'code 0'],
      ]);
      expect(lines.some((l) => l['msg'] === 'service did not stop; killing')).toBe(false);
    } finally {
      await supervisor.stop();
    }
  });

  it("derives each process's options and environment from its memory profile", () => {
    expect(serviceExecArgv({})).toEqual([...SERVICE_EXEC_ARGV, ...FAST_EXEC_ARGV]);
    expect(serviceExecArgv({ memory: 'fast' })).toEqual([
      ...SERVICE_EXEC_ARGV,
      '--single-threaded-gc',
    ]);
    expect(serviceExecArgv({ memory: 'lean' })).toEqual([
      ...SERVICE_EXEC_ARGV,
      '--lite-mode',
      '--no-expose-wasm',
    ]);
    // The supervisor's own environment passes through; the profile's settings win.
    const base = { PATH: '/bin', MALLOC_ARENA_MAX: '8' };
    expect(serviceEnv({ memory: 'fast' }, base)).toEqual({ PATH: '/bin', ...SERVICE_ENV });
    expect(serviceEnv({ memory: 'lean' }, base)).toEqual({
      PATH: '/bin',
      ...SERVICE_ENV,
      ...LEAN_ENV,
    });
  });

  it('starts a process of either profile without a word on stderr', () => {
    // Node warns on stderr when its flags conflict; every start would add it to the agent's log.
    for (const memory of ['fast', 'lean'] as const) {
      const run = spawnSync(process.execPath, [...serviceExecArgv({ memory }), '-e', '0'], {
        encoding: 'utf8',
      });
      expect({ memory, status: run.status, stderr: run.stderr }).toEqual({
        memory,
        status: 0,
        stderr: '',
      });
    }
  });

  itIf(
    kernelAtLeast(6, 12) && fs.readFileSync('/proc/self/sched', 'utf8').includes('se.slice'),
    'slice',
    `Linux ${os.release()} honours no per-task EEVDF slice (6.12 and later do)`,
  )(
    'gives every thread of a service with sliceNs that EEVDF slice, keeping its niceness',
    async () => {
      const slices = (pid: number) =>
        fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
          const sched = fs.readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8');
          return Number(/^se\.slice\s*:\s*(\d+)/m.exec(sched)?.[1] ?? NaN);
        });
      const { log, lines } = capture();
      const supervisor = new Supervisor(
        [
          { ...spec('quick', 'ready', 1), sliceNs: SHORT_SLICE_NS, nice: 5 },
          spec('plain', 'ready', 2),
        ],
        log,
      );
      try {
        supervisor.start();
        await until(() => supervisor.ready(), 'readiness');
        const pid = (name: string) => supervisor.statuses().find((s) => s.name === name)?.pid ?? 0;
        await until(
          () => slices(pid('quick')).every((slice) => slice === SHORT_SLICE_NS),
          'the short slice on every thread',
        );
        expect(slices(pid('quick')).length).toBeGreaterThan(1);
        expect(
          fs.readdirSync(`/proc/${pid('quick')}/task`).map((t) => os.getPriority(Number(t))),
        ).toEqual(slices(pid('quick')).map(() => 5));
        expect(slices(pid('plain')).every((slice) => slice !== SHORT_SLICE_NS)).toBe(true);
        // The supervisor says so when the service is ready, for that service alone.
        const ready = (name: string) =>
          lines.find((l) => l['msg'] === 'service ready' && l['service'] === name);
        expect(ready('quick')).toMatchObject({ sliceNs: SHORT_SLICE_NS });
        expect(ready('quick')?.['slicedThreads']).toBeGreaterThan(1);
        expect(ready('plain')).not.toHaveProperty('slicedThreads');
      } finally {
        await supervisor.stop();
      }
    },
  );

  it('reports a service that declares itself unhealthy', async () => {
    const { log } = capture();
    const supervisor = new Supervisor([spec('staticpod', 'unhealthy', 1)], log);
    const server = await startHealthServer(supervisor, 0);
    supervisor.start();
    try {
      await until(() => supervisor.statuses()[0]?.healthy === false, 'health report');
      const res = await fetch(`http://127.0.0.1:${server.port}/healthz`);
      expect(res.status).toBe(503);
      expect(
        ((await res.json()) as { services: Array<{ detail: string }> }).services[0]?.detail,
      ).toBe('index unreachable');
      // A service that reports a fault is not ready either, although it started.
      expect(supervisor.statuses()[0]?.ready).toBe(true);
      expect((await fetch(`http://127.0.0.1:${server.port}/readyz`)).status).toBe(503);
    } finally {
      await supervisor.stop();
      await server.close();
    }
  });

  it('counts a readyAfterHealthy service ready only once it reports itself healthy', async () => {
    const { log } = capture();
    const supervisor = new Supervisor(
      [{ ...spec('staticpod', 'ready', 1), readyAfterHealthy: true }, spec('dns', 'ready', 2)],
      log,
    );
    supervisor.start();
    try {
      await until(() => supervisor.statuses().every((s) => s.ready), 'both started');
      // Started but never reported a converged pass: healthy, not ready.
      expect(supervisor.healthy()).toBe(true);
      expect(supervisor.ready()).toBe(false);
    } finally {
      await supervisor.stop();
    }
  });

  it('ignores a message that is not a typed child message', async () => {
    const { log, lines } = capture();
    const supervisor = new Supervisor([spec('staticpod', 'garbage', 1)], log);
    supervisor.start();
    try {
      await until(() => lines.some((l) => l['msg'] === 'ignore unknown message'), 'warning');
      expect(supervisor.statuses()[0]).toMatchObject({ ready: true, healthy: null });
    } finally {
      await supervisor.stop();
    }
  });

  it('restarts a crashing service with growing backoff and reports it unhealthy', async () => {
    const { log, lines } = capture();
    const supervisor = new Supervisor([spec('flaky', 'crash', 1)], log, {
      initialMs: 30,
      maxMs: 200,
      resetAfterMs: 60_000,
    });
    supervisor.start();
    try {
      await until(() => (supervisor.statuses()[0]?.restarts ?? 0) >= 3, 'three restarts');
      expect(supervisor.healthy()).toBe(false);
      const delays = lines
        .filter((l) => l['msg'] === 'service exited; restarting')
        .map((l) => l['delayMs'] as number);
      expect(delays[2]).toBeGreaterThan(delays[0] as number);
      expect(supervisor.statuses()[0]?.lastExit).toBe('code 3');
    } finally {
      await supervisor.stop();
    }
  });
});
