import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Controller, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import {
  PROCESS_LIFECYCLE,
  staticpod,
  type ChildMessage,
  type ProcessLifecycle,
} from '@podmin/agent-contracts';
import { agentClient, serviceSocket } from '@podmin/agent-data-access-grpc';
import { JsonLogger } from '@podmin/agent-util-logging';
import { localAgentArgs } from '@podmin/testing';
import { PodminError } from '@podmin/util-errors';
import {
  runAgentProcess,
  type AgentProcessDefinition,
  type RunAgentProcessOptions,
  type SupervisorChannel,
} from './run-agent-process';

const HANG = Symbol('HANG');

/** Whether the fake's next status call fails with a domain error. */
const statusFails = { on: false };

/** Fake StaticPod contract: reports the lifecycle through its calls. */
@Controller()
@staticpod.StaticPodControllerMethods()
class FakeController implements staticpod.StaticPodController {
  constructor(@Inject(PROCESS_LIFECYCLE) private readonly lifecycle: ProcessLifecycle) {}
  getStatus(): staticpod.StaticPodStatus {
    if (statusFails.on) throw new PodminError('OBJECT_NOT_FOUND', 'reading status: none');
    this.lifecycle.reportHealth(false, 'index unreachable');
    return {
      healthy: false,
      lastError: 'index unreachable',
      lastSuccess: '',
      indexEtag: '',
      pods: [],
    };
  }
}

/** Hangs its shutdown when told to, to show the bounded grace. */
@Injectable()
class Hanger implements OnApplicationShutdown {
  constructor(@Inject(HANG) private readonly hang: { on: boolean }) {}
  onApplicationShutdown(): Promise<void> {
    return this.hang.on ? new Promise(() => undefined) : Promise.resolve();
  }
}

/** A recording harness around one in-process run; `supervised` gives its channel a stop word. */
function harness(root: string, supervised = false) {
  const sent: ChildMessage[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const exits: number[] = [];
  let disconnect: (() => void) | undefined;
  let stop: (() => void) | undefined;
  let signal: ((s: NodeJS.Signals) => void) | undefined;
  let exited: (code: number) => void = () => undefined;
  const exitedOnce = new Promise<number>((resolve) => (exited = resolve));
  const channel: SupervisorChannel = {
    send: (m) => sent.push(m),
    onDisconnect: (l) => (disconnect = l),
    ...(supervised ? { onStop: (l: () => void) => (stop = l) } : {}),
  };
  const options: RunAgentProcessOptions = {
    argv: localAgentArgs(path.join(root, 'bucket')),
    env: { PODMIN_NODE_ROOT: root },
    channel,
    exit: (code) => {
      exits.push(code);
      exited(code);
    },
    onSignal: (l) => (signal = l),
    shutdownGraceMs: 500,
    logger: new JsonLogger({
      write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>),
    }),
  };
  return {
    sent,
    lines,
    exits,
    options,
    exitedOnce,
    disconnect: () => disconnect?.(),
    stop: () => stop?.(),
    signal: (s: NodeJS.Signals) => signal?.(s),
  };
}

describe('runAgentProcess', () => {
  let root: string;
  const hang = { on: false };
  let lifecycle: ProcessLifecycle | undefined;
  const definition: AgentProcessDefinition = {
    service: 'staticpod',
    module: (context) => {
      lifecycle = context.lifecycle;
      @Module({
        controllers: [FakeController],
        providers: [
          { provide: PROCESS_LIFECYCLE, useValue: context.lifecycle },
          { provide: HANG, useValue: hang },
          Hanger,
        ],
      })
      class FakeModule {}
      return Promise.resolve(FakeModule);
    },
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-runtime-'));
    hang.on = false;
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('exits 2 listing every bad flag and environment value, serving nothing', async () => {
    const h = harness(root);
    const running = await runAgentProcess(definition, {
      ...h.options,
      argv: ['--provider', 'gcp', '--cluster', 'Bad_Name', '--extra', 'x'],
      env: { PODMIN_AGENT_REGISTRY_LISTEN: '0.0.0.0:5000' },
    });
    expect(running).toBeUndefined();
    expect(h.exits).toEqual([2]);
    const error = String(h.lines.find((l) => l['msg'] === 'validate configuration')?.['error']);
    for (const field of [
      '--provider',
      '--cluster',
      '--extra',
      '--bucket',
      'PODMIN_AGENT_REGISTRY_LISTEN',
    ])
      expect(error).toContain(field);
    expect(h.sent).toEqual([]);
  });

  it('serves its contract on the socket, reports ready and health, and keeps error codes', async () => {
    const h = harness(root);
    const running = await runAgentProcess(definition, h.options);
    expect(running).toBeDefined();
    expect(h.sent).toEqual([{ type: 'ready' }]);
    const socket = serviceSocket(path.join(root, 'run/podmin/agent'), 'staticpod');
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    const client = agentClient('staticpod', socket);
    try {
      await expect(client.getStatus({})).resolves.toMatchObject({ healthy: false });
      expect(h.sent).toContainEqual({
        type: 'health',
        healthy: false,
        detail: 'index unreachable',
      });
      statusFails.on = true;
      await expect(client.getStatus({})).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
    } finally {
      statusFails.on = false;
      client.close();
    }
    h.signal('SIGTERM');
    expect(await h.exitedOnce).toBe(0);
    expect(fs.existsSync(socket)).toBe(false);
  });

  it('exits 1 when a long-running loop dies, and 0 when the supervisor goes', async () => {
    const failing = harness(root);
    await runAgentProcess(definition, failing.options);
    lifecycle?.fail('reconcile loop died', new Error('boom'));
    expect(await failing.exitedOnce).toBe(1);
    expect(failing.lines).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'reconcile loop died', error: 'boom' }),
    );
    const orphan = harness(root);
    await runAgentProcess(definition, orphan.options);
    orphan.disconnect();
    expect(await orphan.exitedOnce).toBe(0);
    expect(orphan.lines.some((l) => l['msg'] === 'supervisor gone')).toBe(true);
  });

  it('under a supervisor ignores SIGTERM and SIGINT, still serving, and stops on its word', async () => {
    const h = harness(root, true);
    await runAgentProcess(definition, h.options);
    const socket = serviceSocket(path.join(root, 'run/podmin/agent'), 'staticpod');
    // What a group signal (Ctrl-C, KillMode=control-group) delivers to every process.
    h.signal('SIGTERM');
    h.signal('SIGINT');
    const client = agentClient('staticpod', socket);
    try {
      await expect(client.getStatus({})).resolves.toMatchObject({ healthy: false });
    } finally {
      client.close();
    }
    expect(h.exits).toEqual([]);
    expect(
      h.lines.filter((l) => l['msg'] === 'ignore signal; the supervisor stops this process'),
    ).toEqual([
      expect.objectContaining({ signal: 'SIGTERM' }),
      expect.objectContaining({ signal: 'SIGINT' }),
    ]);
    h.stop();
    expect(await h.exitedOnce).toBe(0);
    expect(h.lines.some((l) => l['msg'] === 'stop requested by the supervisor')).toBe(true);
    expect(fs.existsSync(socket)).toBe(false);
  });

  it('exits after the grace when shutdown hangs', async () => {
    const h = harness(root);
    await runAgentProcess(definition, h.options);
    hang.on = true;
    const started = Date.now();
    h.signal('SIGINT');
    expect(await h.exitedOnce).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(h.lines.some((l) => l['msg'] === 'shutdown grace exceeded; exiting')).toBe(true);
  });

  it('exits 1 with the hint when the module cannot be built', async () => {
    const h = harness(root);
    const running = await runAgentProcess(
      {
        service: 'identity',
        module: () =>
          Promise.reject(
            new PodminError('NOT_FOUND', 'reading CA secrets: absent', {
              hint: 'run `podmin setup`',
            }),
          ),
      },
      h.options,
    );
    expect(running).toBeUndefined();
    expect(h.exits).toEqual([1]);
    expect(h.lines).toContainEqual(
      expect.objectContaining({ msg: 'start', hint: 'run `podmin setup`' }),
    );
    expect(h.sent).toEqual([]);
  });
});
