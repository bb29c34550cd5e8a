import { Controller, Inject } from '@nestjs/common';
import { identity } from '@podmin/agent-contracts';
import { IdentityProcessService } from './identity.service';

/** gRPC controller of the Identity contract: converts messages only. */
@Controller()
@identity.IdentityControllerMethods()
export class IdentityGrpcController implements identity.IdentityController {
  constructor(@Inject(IdentityProcessService) private readonly service: IdentityProcessService) {}

  ensureWorkload(request: identity.EnsureWorkloadRequest): Promise<identity.WorkloadIdentity> {
    return this.service.ensureWorkload(request.pod, request.namespace, request.service);
  }

  async removeWorkload(
    request: identity.RemoveWorkloadRequest,
  ): Promise<identity.RemoveWorkloadResponse> {
    await this.service.removeWorkload(request.pod);
    return {};
  }

  getNodeCertificate(): Promise<identity.NodeCertificate> {
    return this.service.nodeCertificate();
  }
}
