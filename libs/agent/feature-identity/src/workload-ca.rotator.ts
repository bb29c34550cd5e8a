import { hasCode } from '@podmin/util-errors';
import type { Clock, WorkloadCaKey } from '@podmin/util-pki';
import { SECOND_MS, createWorkloadCaCertificate } from '@podmin/util-pki';
import type { CaRotationPolicy, CaRotationStep, NewCaCertificate } from './ca-rotation';
import {
  DEFAULT_CA_ROTATION_POLICY,
  applyCaRotation,
  decideCaRotation,
  restartPropagation,
} from './ca-rotation';
import type { CaState, VerifiedCaState } from './ca-state';
import {
  CA_STATE_KEY,
  CA_STATE_MAX_BYTES,
  parseCaState,
  serializeCaState,
  verifyCaState,
} from './ca-state';
import { IdentityError } from './identity-error';
import type { CaStateObjects, ExternalBundle } from './identity.ports';

/** Settings of the leader's CA rotation. */
export interface WorkloadCaRotatorOptions {
  cluster: string;
  policy?: CaRotationPolicy;
  /** Retry delay after the external bundle could not be observed (default 30 s). */
  externalRetryMs?: number;
  /** Bound on read-decide-write rounds per reconcile, conflicts included (default 8). */
  maxRounds?: number;
}

/** What one reconcile did and when the next one is due. */
export interface CaReconcileReport {
  /** Steps written, in order (`conflict` for a lost compare-and-swap, `restart-propagation` after a failed recheck). */
  steps: string[];
  /** The state now in the bucket. */
  state: VerifiedCaState;
  /** When the cycle next needs attention. */
  nextCheckAt: Date;
}

interface ReadState {
  verified: VerifiedCaState;
  etag: string;
}

/**
 * The leader-only writer of `identity/ca.json`: creates it, rotates it through
 * pending → (propagation) → active → retired, recovers from an expired CA, and maintains the
 * optional external trust bundle. Every write is an ETag compare-and-swap, so a superseded
 * leader's write fails and it rereads.
 */
export class WorkloadCaRotator {
  private readonly policy: CaRotationPolicy;
  private readonly externalRetryMs: number;
  private readonly maxRounds: number;

  constructor(
    private readonly objects: CaStateObjects,
    private readonly key: WorkloadCaKey,
    private readonly clock: Clock,
    private readonly options: WorkloadCaRotatorOptions,
    private readonly external?: ExternalBundle,
  ) {
    this.policy = options.policy ?? DEFAULT_CA_ROTATION_POLICY;
    this.externalRetryMs = options.externalRetryMs ?? 30 * SECOND_MS;
    this.maxRounds = options.maxRounds ?? 8;
  }

  /** Advances the rotation cycle as far as the current time allows. */
  async reconcile(): Promise<CaReconcileReport> {
    const steps: string[] = [];
    for (let round = 0; round < this.maxRounds; round++) {
      const current = await this.read();
      const now = this.clock.now();
      const step = decideCaRotation(current?.verified.state, now, this.policy);
      if (step.kind === 'wait' && current) {
        if (this.external && !(await this.publishExternal(current.verified.bundlePem))) {
          return this.report(steps, current, new Date(now.getTime() + this.externalRetryMs));
        }
        return this.report(steps, current, step.until);
      }
      if (step.kind === 'wait') continue; // unreachable: a missing state decides `create`
      const next = await this.nextState(current, step, now);
      if (!next) {
        // The external copy was not observed yet; the propagation interval cannot start.
        return this.report(steps, current, new Date(now.getTime() + this.externalRetryMs));
      }
      const verifiedNext = verifyCaState(next.state, this.key, this.options.cluster);
      if (
        step.kind === 'recover' &&
        this.external &&
        !(await this.publishExternal(verifiedNext.bundlePem))
      ) {
        throw new IdentityError(
          'PRECONDITION_FAILED',
          `recovering the expired workload CA: the replacement bundle was not observed at ${this.external.location}`,
          {
            hint: 'check that the node role may GetObject and PutObject on the --workload-ca-publish destination',
          },
        );
      }
      try {
        await this.write(next.state, current?.etag);
        steps.push(next.label);
      } catch (err) {
        // A lost compare-and-swap or S3's 409 "retry": reread and reconcile again.
        if (!hasCode(err, 'PRECONDITION_FAILED') && !hasCode(err, 'CONFLICT')) throw err;
        steps.push('conflict');
      }
    }
    throw new IdentityError(
      'CONFLICT_RETRIES_EXHAUSTED',
      `rotating the workload CA: ${CA_STATE_KEY} kept changing for ${this.maxRounds} rounds`,
    );
  }

  private async nextState(
    current: ReadState | undefined,
    step: Exclude<CaRotationStep, { kind: 'wait' }>,
    now: Date,
  ): Promise<{ state: CaState; label: string } | undefined> {
    const state = current?.verified.state;
    if (step.kind === 'start-propagation' && this.external && current) {
      // The activation delay starts only once the exact bundle is seen at the destination.
      if (!(await this.publishExternal(current.verified.bundlePem))) return undefined;
    }
    if (step.kind === 'promote' && this.external && current) {
      if (!(await this.observed(current.verified.bundlePem))) {
        return { state: restartPropagation(current.verified.state), label: 'restart-propagation' };
      }
    }
    const needsFresh =
      step.kind === 'create' ||
      step.kind === 'add-pending' ||
      (step.kind === 'recover' && step.replacement === 'new');
    let fresh: NewCaCertificate | undefined;
    if (needsFresh) {
      const cert = await createWorkloadCaCertificate(
        this.key,
        this.options.cluster,
        now,
        this.policy.lifetimeMs,
      );
      fresh = { pem: cert.pem, notAfter: cert.notAfter };
    }
    return { state: applyCaRotation(state, step, now, fresh, this.policy), label: step.kind };
  }

  private async read(): Promise<ReadState | undefined> {
    let body: Buffer;
    let etag: string;
    try {
      ({ body, etag } = await this.objects.get(CA_STATE_KEY, { maxBytes: CA_STATE_MAX_BYTES }));
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
      throw err;
    }
    // A state that fails verification is never overwritten: it needs an operator.
    return { verified: verifyCaState(parseCaState(body), this.key, this.options.cluster), etag };
  }

  private write(state: CaState, etag: string | undefined): Promise<string> {
    const body = serializeCaState(state);
    return etag === undefined
      ? this.objects.putIfAbsent(CA_STATE_KEY, body)
      : this.objects.putIfMatch(CA_STATE_KEY, body, etag);
  }

  /** True when the external object holds exactly `bundle`. */
  private async observed(bundle: string): Promise<boolean> {
    const content = await this.external?.read();
    return content?.body === bundle;
  }

  /** Makes the external object hold `bundle` (CAS) and reports whether it was then observed. */
  private async publishExternal(bundle: string): Promise<boolean> {
    const external = this.external;
    if (!external) return true;
    const content = await external.read();
    if (content?.body === bundle) return true;
    try {
      await external.write(bundle, content?.etag);
    } catch (err) {
      if (hasCode(err, 'PRECONDITION_FAILED') || hasCode(err, 'CONFLICT')) return false;
      throw err;
    }
    return this.observed(bundle);
  }

  private report(
    steps: string[],
    current: ReadState | undefined,
    nextCheckAt: Date,
  ): CaReconcileReport {
    if (!current)
      throw new IdentityError('INTERNAL', `rotating the workload CA: ${CA_STATE_KEY} vanished`);
    return { steps, state: current.verified, nextCheckAt };
  }
}
