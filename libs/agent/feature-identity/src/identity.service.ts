import fs from 'node:fs/promises';
import path from 'node:path';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { identity } from '@podmin/agent-contracts';
import { MIN_LEADER_DUTY_MS } from '@podmin/agent-util-config';
import { FaultBackoff } from '@podmin/agent-util-faults';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { hasCode } from '@podmin/util-errors';
import { isDnsLabel } from '@podmin/util-names';
import { NodeLeafSource, type Clock, type ClusterCa, type WorkloadCaKey } from '@podmin/util-pki';
import type {
  CaStateObjects,
  ExternalBundle,
  LeadershipCheck,
  LogExporter,
} from './identity.ports';
import { TelemetryMaintenance } from './telemetry-maintenance';
import { WorkloadCaRotator } from './workload-ca.rotator';
import { WorkloadCaTrust } from './workload-ca.trust';
import {
  GENERATIONS_DIR,
  IDENTITY_LINK,
  WORKLOADS_DIR,
  WorkloadIdentityService,
} from './workload-identity.service';

/** Everything the identity process is built from (secrets already parsed, held in memory only). */
export interface IdentityProcessDeps {
  cluster: string;
  nodegroup: string;
  nodeRoot: string;
  nodeAddress: string;
  nodeId: string;
  objects: CaStateObjects;
  workloadCaKey: WorkloadCaKey;
  clusterCa: ClusterCa;
  clock: Clock;
  logger: StructuredLogger;
  /** Whether this node leads now: only the leader rotates `identity/ca.json`. */
  leadership: LeadershipCheck;
  /** The `--workload-ca-publish` destination, when configured. */
  external?: ExternalBundle;
  /** Log export (`setup --otel-logs mtls=true` and/or `ca=`): absent when there is nothing to do. */
  telemetry?: IdentityTelemetryDeps;
  /** Why log export's settings were refused: log export is then off, logged and shown in health. */
  telemetryProblems?: readonly string[];
  /** Health notes to the supervisor (log export's problems never make the process unhealthy). */
  reportHealth?: (healthy: boolean, detail?: string) => void;
}

/** What agent-identity keeps for the node's log exporter. */
export interface IdentityTelemetryDeps {
  /** Keep Fluent Bit's client leaf under `/run/podmin/telemetry`. */
  mtls: boolean;
  /** The exporter's `ca=` object: its URL and reader. */
  ca?: { source: string; fetch: () => Promise<Uint8Array> };
  /** Restarts Fluent Bit after a replacement. */
  exporter: LogExporter;
}

/** Token of the {@link IdentityProcessDeps} the identity module provides. */
export const IDENTITY_PROCESS_DEPS = Symbol('IDENTITY_PROCESS_DEPS');
const MAX_ROTATION_WAIT_MS = 60 * 60 * 1000;
// A follower checks again this often, so a new leader takes over rotation within seconds; a
// failed pass is retried by the agent's fault backoff up to the same interval, so a bucket
// fault costs no more requests than health and its end is seen within one interval.
const FOLLOWER_CHECK_MS = 5 * 1000;
// A rotation pass (a few conditional writes) must fit in what is left of the leader's term;
// the configuration refuses election timings that never leave a leader this much.
const MIN_DUTY_MS = MIN_LEADER_DUTY_MS;

/** Identity services of one node: CA trust, leader rotation, workload generations, node leaves. */
@Injectable()
export class IdentityProcessService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly trust: WorkloadCaTrust;
  private readonly rotator: WorkloadCaRotator;
  private readonly workloads: WorkloadIdentityService;
  private readonly nodeLeaf: NodeLeafSource;
  private readonly telemetry: TelemetryMaintenance | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly rotationBackoff = new FaultBackoff({ pollMs: FOLLOWER_CHECK_MS });

  constructor(@Inject(IDENTITY_PROCESS_DEPS) private readonly deps: IdentityProcessDeps) {
    this.trust = new WorkloadCaTrust(deps.objects, deps.workloadCaKey, deps.clock, deps.cluster);
    this.rotator = new WorkloadCaRotator(
      deps.objects,
      deps.workloadCaKey,
      deps.clock,
      { cluster: deps.cluster },
      deps.external,
    );
    this.workloads = new WorkloadIdentityService(deps.nodeRoot, deps.clock);
    this.nodeLeaf = new NodeLeafSource(
      deps.clusterCa,
      {
        cluster: deps.cluster,
        nodegroup: deps.nodegroup,
        nodeId: deps.nodeId,
        ipv6: deps.nodeAddress,
      },
      deps.clock,
    );
    this.telemetry = deps.telemetry
      ? new TelemetryMaintenance({
          nodeRoot: deps.nodeRoot,
          identity: { cluster: deps.cluster, nodeId: deps.nodeId },
          mtls: deps.telemetry.mtls,
          ...(deps.telemetry.ca ? { ca: deps.telemetry.ca } : {}),
          trust: this.trust,
          exporter: deps.telemetry.exporter,
          clock: deps.clock,
          logger: deps.logger,
          onProblems: (detail) =>
            deps.reportHealth?.(true, detail === undefined ? undefined : `log export: ${detail}`),
        })
      : undefined;
  }

  /** Runs one rotation pass and schedules the next (leader only). */
  async rotate(): Promise<void> {
    if (this.stopped) return;
    let waitMs = FOLLOWER_CHECK_MS;
    try {
      if (!(await this.leading())) return;
      const report = await this.rotator.reconcile();
      this.rotationBackoff.succeeded();
      if (report.steps.length > 0)
        this.deps.logger.event('info', 'rotate workload CA', { steps: report.steps.join(', ') });
      this.deps.logger.event('debug', 'next workload CA check', {
        at: report.nextCheckAt.toISOString(),
      });
      waitMs = Math.max(
        1000,
        Math.min(
          MAX_ROTATION_WAIT_MS,
          report.nextCheckAt.getTime() - this.deps.clock.now().getTime(),
        ),
      );
    } catch (err) {
      waitMs = Math.round(this.rotationBackoff.failed());
      this.deps.logger.event('warn', 'rotate workload CA failed', {
        error: err instanceof Error ? err.message : String(err),
        retryInMs: waitMs,
      });
    } finally {
      if (!this.stopped) this.timer = setTimeout(() => void this.rotate(), waitMs);
    }
  }

  /** Whether leader duties may run now; an unreachable coordinator counts as not leading. */
  private async leading(): Promise<boolean> {
    try {
      return await this.deps.leadership.leading(MIN_DUTY_MS);
    } catch (err) {
      this.deps.logger.event('warn', 'leadership unknown; skipping leader duties', {
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
  }

  /** Ensures a Pod's workload identity generation; creates the CA first on a new cluster. */
  async ensureWorkload(
    pod: string,
    namespace: string,
    service: string,
  ): Promise<{ fingerprint: string; notAfter: string }> {
    let trusted;
    try {
      trusted = await this.trust.load();
    } catch (err) {
      if (!hasCode(err, 'OBJECT_NOT_FOUND') || !(await this.leading())) throw err;
      await this.rotator.reconcile();
      trusted = await this.trust.load();
    }
    const result = await this.workloads.ensure(
      { cluster: this.deps.cluster, namespace, pod, ...(service ? { service } : {}) },
      trusted,
    );
    if (result.outcome === 'issued')
      this.deps.logger.event('info', 'issue workload identity', {
        pod,
        namespace,
        generation: result.generation,
      });
    return { fingerprint: result.fingerprint, notAfter: result.notAfter.toISOString() };
  }

  /** Removes a departed Pod's identity symlink and generations. */
  async removeWorkload(pod: string): Promise<void> {
    if (!isDnsLabel(pod, Infinity)) return;
    const dir = path.join(this.deps.nodeRoot, WORKLOADS_DIR, pod);
    const generations = path.join(dir, GENERATIONS_DIR);
    // Generation directories are sealed 0555; open them up so they can be removed.
    for (const g of await fs.readdir(generations).catch(() => [] as string[]))
      await fs.chmod(path.join(generations, g), 0o755).catch(() => undefined);
    await fs.rm(path.join(dir, IDENTITY_LINK), { force: true });
    await fs.rm(generations, { recursive: true, force: true });
  }

  /** The node's in-memory coordination leaf. */
  async nodeCertificate(): Promise<identity.NodeCertificate> {
    const leaf = await this.nodeLeaf.leaf();
    return {
      certificatePem: leaf.certificatePem,
      privateKeyPem: leaf.privateKeyPem,
      caPem: this.deps.clusterCa.certificate.pem,
      notAfter: leaf.certificate.notAfter.toISOString(),
    };
  }

  onApplicationBootstrap(): void {
    void this.rotate();
    const refused = this.deps.telemetryProblems ?? [];
    if (refused.length > 0) {
      // Logged once: the settings do not change while the process runs.
      this.deps.logger.event('error', 'log export off: invalid settings', {
        problems: refused.join('; '),
      });
      this.deps.reportHealth?.(true, `log export off: ${refused.join('; ')}`);
    }
    this.telemetry?.start();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.telemetry?.stop();
  }
}
