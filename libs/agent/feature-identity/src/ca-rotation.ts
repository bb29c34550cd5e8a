import { DAY_MS, MINUTE_MS, WORKLOAD_CA_LIFETIME_MS } from '@podmin/util-pki';
import type { CaCertificateEntry, CaState } from './ca-state';

/** Durations of the workload CA rotation cycle (the spec's values by default). */
export interface CaRotationPolicy {
  /** Lifetime of each CA certificate (one year). */
  lifetimeMs: number;
  /** Publish the next certificate as pending this long before the active one expires (30 days). */
  rotateBeforeMs: number;
  /** Propagation interval between a pending certificate's publication and its promotion (10 minutes). */
  propagationMs: number;
  /** How long a retired certificate stays in the bundle after promotion (30 days). */
  retainRetiredMs: number;
}

/** The spec's rotation policy. */
export const DEFAULT_CA_ROTATION_POLICY: Readonly<CaRotationPolicy> = Object.freeze({
  lifetimeMs: WORKLOAD_CA_LIFETIME_MS,
  rotateBeforeMs: 30 * DAY_MS,
  propagationMs: 10 * MINUTE_MS,
  retainRetiredMs: 30 * DAY_MS,
});

/** The next step of the rotation cycle for a given state and time. */
export type CaRotationStep =
  /** No `identity/ca.json`: create it with a new active certificate. */
  | { kind: 'create' }
  /** The active certificate has expired: replace it and activate immediately (a still-valid pending one is promoted). */
  | { kind: 'recover'; replacement: 'pending' | 'new' }
  /** A retired certificate's retention ended: drop it. */
  | { kind: 'drop-retired' }
  /** Thirty days before expiry: add a new certificate as pending (the old one stays active). */
  | { kind: 'add-pending' }
  /** A pending certificate without a propagation start: start the 10-minute interval (after external observation). */
  | { kind: 'start-propagation' }
  /** The propagation interval passed: promote pending → active, active → retired. */
  | { kind: 'promote' }
  /** Nothing to do before `until`. */
  | { kind: 'wait'; until: Date };

const at = (iso: string): number => Date.parse(iso);
const entry = (state: CaState, s: CaCertificateEntry['state']): CaCertificateEntry | undefined =>
  state.certificates.find((c) => c.state === s);

/** Decides the next rotation step; pure. */
export function decideCaRotation(
  state: CaState | undefined,
  now: Date,
  policy: CaRotationPolicy = DEFAULT_CA_ROTATION_POLICY,
): CaRotationStep {
  if (!state) return { kind: 'create' };
  const t = now.getTime();
  const active = entry(state, 'active');
  const pending = entry(state, 'pending');
  const retired = entry(state, 'retired');
  if (!active) return { kind: 'create' };
  if (t >= at(active.notAfter)) {
    return {
      kind: 'recover',
      replacement: pending && t < at(pending.notAfter) ? 'pending' : 'new',
    };
  }
  if (retired?.retireAfter !== undefined && t >= at(retired.retireAfter))
    return { kind: 'drop-retired' };
  if (pending) {
    if (pending.activateAfter === undefined) return { kind: 'start-propagation' };
    if (t >= at(pending.activateAfter)) return { kind: 'promote' };
  } else if (t >= at(active.notAfter) - policy.rotateBeforeMs) {
    return { kind: 'add-pending' };
  }
  const deadlines = [
    at(active.notAfter),
    pending?.activateAfter !== undefined
      ? at(pending.activateAfter)
      : at(active.notAfter) - policy.rotateBeforeMs,
    retired?.retireAfter !== undefined ? at(retired.retireAfter) : Infinity,
  ].filter((d) => d > t);
  return { kind: 'wait', until: new Date(Math.min(...deadlines)) };
}

/** A freshly created CA certificate as the state records it. */
export interface NewCaCertificate {
  pem: string;
  notAfter: Date;
}

/**
 * Applies a step to a state; pure. `create`, `add-pending` and `recover` with a `new`
 * replacement need `fresh`, the newly created certificate.
 */
export function applyCaRotation(
  state: CaState | undefined,
  step: Exclude<CaRotationStep, { kind: 'wait' }>,
  now: Date,
  fresh?: NewCaCertificate,
  policy: CaRotationPolicy = DEFAULT_CA_ROTATION_POLICY,
): CaState {
  const needFresh = (): CaCertificateEntry => {
    if (!fresh)
      throw new Error(`applying CA rotation step ${step.kind}: a new certificate is required`);
    return { pem: fresh.pem, state: 'active', notAfter: fresh.notAfter.toISOString() };
  };
  const iso = (ms: number): string => new Date(ms).toISOString();
  const certs = state?.certificates ?? [];
  const pending = certs.find((c) => c.state === 'pending');
  switch (step.kind) {
    case 'create':
      return { version: 1, certificates: [needFresh()] };
    case 'recover': {
      // The expired certificate verifies nothing any more, so it is not retained.
      const replacement =
        step.replacement === 'pending' && pending
          ? { pem: pending.pem, notAfter: pending.notAfter, state: 'active' as const }
          : needFresh();
      return { version: 1, certificates: [replacement] };
    }
    case 'drop-retired':
      return { version: 1, certificates: certs.filter((c) => c.state !== 'retired') };
    case 'add-pending':
      // At most two certificates: a retired one still listed (only after unusual clock jumps)
      // gives way to the pending one, which workloads must trust first.
      return {
        version: 1,
        certificates: [
          ...certs.filter((c) => c.state === 'active'),
          { ...needFresh(), state: 'pending' },
        ],
      };
    case 'start-propagation':
      return {
        version: 1,
        certificates: certs.map((c) =>
          c.state === 'pending'
            ? { ...c, activateAfter: iso(now.getTime() + policy.propagationMs) }
            : c,
        ),
      };
    case 'promote':
      return {
        version: 1,
        certificates: certs.flatMap((c): CaCertificateEntry[] => {
          if (c.state === 'pending') return [{ pem: c.pem, state: 'active', notAfter: c.notAfter }];
          if (c.state === 'active') {
            return [
              {
                pem: c.pem,
                state: 'retired',
                notAfter: c.notAfter,
                retireAfter: iso(now.getTime() + policy.retainRetiredMs),
              },
            ];
          }
          return [];
        }),
      };
  }
}

/** Clears a pending certificate's propagation start, e.g. when the external copy no longer matches. */
export function restartPropagation(state: CaState): CaState {
  return {
    version: 1,
    certificates: state.certificates.map((c) =>
      c.state === 'pending' ? { pem: c.pem, state: c.state, notAfter: c.notAfter } : c,
    ),
  };
}
