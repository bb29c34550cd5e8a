import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Controller, Inject, Module } from '@nestjs/common';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_FILES, protoRoot, staticpod } from '@podmin/agent-contracts';
import { JsonLogger } from '@podmin/agent-util-logging';
import { PodminError } from '@podmin/util-errors';
import { serviceSocket, startGrpcService, type GrpcService } from './grpc-service';
import { unaryClient } from './unary-client';

const STATE = Symbol('STATE');

/** Test controller: status from a mutable object, services always failing with a domain error. */
@Controller()
@staticpod.StaticPodControllerMethods()
class FakeStaticPodController implements staticpod.StaticPodController {
  constructor(@Inject(STATE) private readonly state: { healthy: boolean }) {}
  getStatus(): staticpod.StaticPodStatus {
    return {
      healthy: this.state.healthy,
      lastError: '',
      lastSuccess: '',
      indexEtag: '"e"',
      pods: ['web'],
    };
  }
  getServices(): staticpod.ServiceDesiredState {
    throw new PodminError('PRECONDITION_FAILED', 'staging: index changed');
  }
}

@Module({
  controllers: [FakeStaticPodController],
  providers: [{ provide: STATE, useValue: { healthy: true } }],
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

  it('answers the generated contract and maps domain errors to gRPC status', async () => {
    const client = unaryClient(PROTO_FILES.staticpod, 'StaticPod', socket);
    try {
      await expect(client.call('getStatus', {})).resolves.toEqual({
        healthy: true,
        lastError: '',
        lastSuccess: '',
        indexEtag: '"e"',
        pods: ['web'],
      });
      await expect(client.call('getServices', {})).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringContaining('staging: index changed') as unknown,
      });
    } finally {
      client.close();
    }
  });

  it('serves the standard health service', async () => {
    const root = protoRoot();
    const healthProto = path.join(
      path.dirname(require.resolve('grpc-health-check/package.json')),
      'proto',
      'health',
      'v1',
      'health.proto',
    );
    const def = loadSync(healthProto, { includeDirs: [root], enums: String });
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
