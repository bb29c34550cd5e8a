import { Controller, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from '@podmin/agent-contracts';

/** gRPC controller of the Registry contract: reports the bound HTTP address. */
@Controller()
@registry.RegistryControllerMethods()
export class RegistryGrpcController implements registry.RegistryController {
  constructor(@Inject(HttpAdapterHost) private readonly host: HttpAdapterHost) {}

  getStatus(): registry.RegistryStatus {
    const server = this.host.httpAdapter?.getHttpServer() as Server | undefined;
    const bound = server?.address() as AddressInfo | null | undefined;
    if (!bound) return { address: '' };
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    return { address: `${host}:${bound.port}` };
  }
}
