import { Module, type DynamicModule } from '@nestjs/common';
import { PROCESS_LIFECYCLE, type ProcessLifecycle } from '@podmin/agent-contracts';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import type { AgentProcessConfig } from '@podmin/agent-util-config';
import { StaticPodGrpcController } from './staticpod.grpc-controller';
import {
  DESIRED_STATE_READER,
  IDENTITY_ISSUER,
  SECRET_SOURCE,
  TRUST_LIST_READER,
  type DesiredStateReader,
  type IdentityIssuer,
  type SecretSource,
  type TrustListReader,
} from './staticpod.ports';
import type { LoopTiming } from './reconcile-loop';
import {
  DEFAULT_RECEIPT_TIMING,
  ReceiptWriter,
  type KubeletView,
  type ReceiptTiming,
} from './receipts/receipt-writer';
import type { ReceiptSink } from './staticpod.ports';
import {
  STATICPOD_ROLLOUTS,
  type RolloutPorts,
  STATICPOD_CONFIG,
  STATICPOD_LOGGER,
  STATICPOD_RECEIPTS,
  STATICPOD_TIMING,
  StaticPodService,
} from './staticpod.service';

/** Where and how the node writes its receipt. */
export interface ReceiptAdapters {
  sink: ReceiptSink;
  kubelet: KubeletView;
  agentVersion: string;
  timing?: Partial<ReceiptTiming>;
}

/** Adapters the process wires into the module. */
export interface StaticPodAdapters {
  config: AgentProcessConfig;
  logger: StructuredLogger;
  /** Health reports and fatal loop failures, to the supervisor. */
  lifecycle: ProcessLifecycle;
  store: DesiredStateReader;
  secrets: SecretSource;
  identity: IdentityIssuer;
  /**
   * The cluster's trust list (the node's Parameter Store): every newly read index is verified
   * against it. Without it nothing is verified.
   */
  trustList?: TrustListReader;
  /** Overrides of the reconcile loop's timing, e.g. `passTimeoutMs` (defaults: DEFAULT_TIMING). */
  timing?: Partial<LoopTiming>;
  /** The node's receipt `status/<nodegroup>/<node-id>.json`; none written without it. */
  receipts?: ReceiptAdapters;
  /** Gated rollouts (kubelet and the coordinator); without them a new revision replaces at once. */
  rollouts?: RolloutPorts;
}

/** The agent-staticpod Nest module. */
@Module({})
export class StaticPodModule {
  /** Module wired with concrete adapters. */
  static register(adapters: StaticPodAdapters): DynamicModule {
    return {
      module: StaticPodModule,
      controllers: [StaticPodGrpcController],
      providers: [
        { provide: STATICPOD_CONFIG, useValue: adapters.config },
        { provide: STATICPOD_LOGGER, useValue: adapters.logger },
        { provide: PROCESS_LIFECYCLE, useValue: adapters.lifecycle },
        { provide: DESIRED_STATE_READER, useValue: adapters.store },
        { provide: SECRET_SOURCE, useValue: adapters.secrets },
        { provide: IDENTITY_ISSUER, useValue: adapters.identity },
        ...(adapters.trustList
          ? [{ provide: TRUST_LIST_READER, useValue: adapters.trustList }]
          : []),
        ...(adapters.timing ? [{ provide: STATICPOD_TIMING, useValue: adapters.timing }] : []),
        ...(adapters.rollouts
          ? [{ provide: STATICPOD_ROLLOUTS, useValue: adapters.rollouts }]
          : []),
        ...(adapters.receipts
          ? [
              {
                provide: STATICPOD_RECEIPTS,
                useValue: receiptWriter(adapters.config, adapters.receipts),
              },
            ]
          : []),
        StaticPodService,
      ],
    };
  }
}

function receiptWriter(config: AgentProcessConfig, receipts: ReceiptAdapters): ReceiptWriter {
  return new ReceiptWriter(
    { nodegroup: config.nodegroup, node: config.nodeId, agentVersion: receipts.agentVersion },
    receipts.sink,
    receipts.kubelet,
    { ...DEFAULT_RECEIPT_TIMING, ...receipts.timing },
  );
}
