import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Controller, Inject, Module } from '@nestjs/common';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_FILES, agentProtoLoaderOptions, staticpod } from '@podmin/agent-contracts';
import { JsonLogger } from '@podmin/agent-util-logging';
import { PodminError, PODMIN_ERROR_CODES, type PodminErrorCode } from '@podmin/util-errors';
import { serviceSocket, startGrpcService, type GrpcService } from './grpc-service';
import { agentClient } from './agent-client';

const STATE = Symbol('STATE');

const state: { healthy: boolean; fail?: PodminErrorCode } = { healthy: true };

/** Test controller: status from a mutable object, or a domain error when `fail` is set. */
@Controller()
@staticpod.StaticPodControllerMethods()
class FakeStaticPodController implements staticpod.StaticPodController {
  constructor(
    @Inject(STATE) private readonly state: { healthy: boolean; fail?: PodminErrorCode },
  ) {}
  getStatus(): staticpod.StaticPodStatus {
    if (this.state.fail)
      throw new PodminError(this.state.fail, `reading status: ${this.state.fail}`);
    if (!this.state.healthy) throw new Error('a bug with secret-looking details');
    return {
      healthy: this.state.healthy,
      lastError: '',
      lastSuccess: '',
      indexEtag: '"e"',
      pods: ['web'],
    };
  }
}

@Module({
  controllers: [FakeStaticPodController],
  providers: [{ provide: STATE, useValue: state }],
})
class FakeModule {}

describe('startGrpcService over a Unix socket', () => {
  let dir: string;
  let service: GrpcService;
  let socket: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-grpc-'));
    socket = serviceSocket(path.join(dir, 'run'), 'staticpod');
    service = await startGrpcService({
      module: FakeModule,
      healthName: 'podmin.agent.v1.StaticPod',
      protoFiles: [PROTO_FILES.staticpod],
      socketPath: socket,
      logger: new JsonLogger({ write: () => undefined }),
    });
  });
  afterAll(async () => {
    await service.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('binds a 0600 socket in a 0700 directory', () => {
    expect(fs.statSync(socket).isSocket()).toBe(true);
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it("answers the generated contract and keeps the server's error code", async () => {
    const client = agentClient('staticpod', socket);
    try {
      await expect(client.getStatus({})).resolves.toEqual({
        healthy: true,
        lastError: '',
        lastSuccess: '',
        indexEtag: '"e"',
        pods: ['web'],
      });
      state.fail = 'PRECONDITION_FAILED';
      await expect(client.getStatus({})).rejects.toMatchObject({
        code: 'PRECONDITION_FAILED',
        message: expect.stringContaining('reading status: PRECONDITION_FAILED') as unknown,
      });
    } finally {
      delete state.fail;
      client.close();
    }
  });

  it('delivers every PodminError code unchanged across the socket', async () => {
    const client = agentClient('staticpod', socket);
    try {
      for (const code of PODMIN_ERROR_CODES) {
        state.fail = code;
        await expect(client.getStatus({})).rejects.toMatchObject({ code });
      }
      delete state.fail;
      // Anything that is not a PodminError becomes INTERNAL with a generic message.
      state.healthy = false;
      const err = await client.getStatus({}).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'INTERNAL' });
      expect(String((err as Error).message)).not.toContain('secret-looking');
    } finally {
      state.healthy = true;
      client.close();
    }
  });

  it('reports an unreachable process as SERVICE_UNAVAILABLE', async () => {
    const client = agentClient('staticpod', path.join(dir, 'absent.sock'));
    try {
      await expect(client.getStatus({}, { timeoutMs: 2000 })).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
      });
    } finally {
      client.close();
    }
  });

  it('serves the standard health service', async () => {
    const healthProto = path.join(
      path.dirname(require.resolve('grpc-health-check/package.json')),
      'proto',
      'health',
      'v1',
      'health.proto',
    );
    const def = loadSync(healthProto, agentProtoLoaderOptions());
    const pkg = loadPackageDefinition(def) as unknown as {
      grpc: { health: { v1: { Health: new (a: string, c: unknown) => Client } } };
    };
    const health = new pkg.grpc.health.v1.Health(
      `unix://${socket}`,
      credentials.createInsecure(),
    ) as unknown as {
      check(
        req: { service: string },
        cb: (err: Error | null, res: { status: string }) => void,
      ): void;
      close(): void;
    };
    const check = (name: string) =>
      new Promise<string>((resolve, reject) =>
        health.check({ service: name }, (err, res) => (err ? reject(err) : resolve(res.status))),
      );
    expect(await check('podmin.agent.v1.StaticPod')).toBe('SERVING');
    service.setServing(false);
    expect(await check('podmin.agent.v1.StaticPod')).toBe('NOT_SERVING');
    health.close();
  });
});
