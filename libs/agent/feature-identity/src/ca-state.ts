import { canonicalJson, isJsonObject, parseStrictJson } from '@podmin/util-oci';
import type { JsonValue } from '@podmin/util-oci';
import type { CertificateInfo, WorkloadCaKey } from '@podmin/util-pki';
import { verifyWorkloadCaCertificate } from '@podmin/util-pki';
import { IdentityError } from './identity-error';

/** Object key of the public workload CA state in the cluster bucket. */
export const CA_STATE_KEY = 'identity/ca.json';
/** Largest accepted `identity/ca.json`. */
export const CA_STATE_MAX_BYTES = 64 * 1024;

/** Role of one workload CA certificate in the rotation cycle. */
export type CaCertificateState = 'active' | 'pending' | 'retired';

/** One certificate entry of `identity/ca.json`. */
export interface CaCertificateEntry {
  /** The self-signed CA certificate, one PEM block. */
  pem: string;
  state: CaCertificateState;
  /** The certificate's notAfter, ISO 8601 UTC with milliseconds (must equal the certificate's). */
  notAfter: string;
  /** Pending only: earliest promotion time; absent until propagation began. */
  activateAfter?: string;
  /** Retired only (required there): when the entry is dropped. */
  retireAfter?: string;
}

/** The document `identity/ca.json`: exactly one active certificate, at most two in all. */
export interface CaState {
  version: 1;
  certificates: CaCertificateEntry[];
}

const ENTRY_FIELDS: Record<CaCertificateState, readonly string[]> = {
  active: ['notAfter', 'pem', 'state'],
  pending: ['activateAfter', 'notAfter', 'pem', 'state'],
  retired: ['notAfter', 'pem', 'retireAfter', 'state'],
};

const isIsoInstant = (v: JsonValue | undefined): v is string =>
  typeof v === 'string' &&
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) &&
  new Date(v).toISOString() === v;

/**
 * Parses `identity/ca.json` strictly (duplicate keys, unknown fields, trailing data, bad
 * timestamps and impossible state combinations are errors); does not look at the PEM contents.
 */
export function parseCaState(body: Buffer | string): CaState {
  const fail = (why: string, cause?: unknown): never => {
    throw new IdentityError('INVALID_ARGUMENT', `parsing ${CA_STATE_KEY}: ${why}`, { cause });
  };
  let doc: JsonValue;
  try {
    doc = parseStrictJson(body, CA_STATE_KEY, { maxBytes: CA_STATE_MAX_BYTES });
  } catch (err) {
    return fail('not strict JSON', err);
  }
  if (!isJsonObject(doc)) return fail('not a JSON object');
  const extra = Object.keys(doc).filter((k) => k !== 'version' && k !== 'certificates');
  if (extra.length > 0) return fail(`unknown field ${extra.join(', ')}`);
  if (doc['version'] !== 1) return fail('version must be 1');
  const list = doc['certificates'];
  if (!Array.isArray(list) || list.length < 1 || list.length > 2) {
    return fail('certificates must list one or two entries');
  }
  const certificates = list.map((raw, i): CaCertificateEntry => {
    const where = `certificates[${i}]`;
    if (!isJsonObject(raw)) return fail(`${where}: not an object`);
    const state = raw['state'];
    if (state !== 'active' && state !== 'pending' && state !== 'retired') {
      return fail(`${where}.state: must be active, pending or retired`);
    }
    const unknown = Object.keys(raw).filter((k) => !ENTRY_FIELDS[state].includes(k));
    if (unknown.length > 0)
      return fail(`${where}: field ${unknown.join(', ')} not allowed on a ${state} entry`);
    const { pem, notAfter, activateAfter, retireAfter } = raw;
    if (typeof pem !== 'string' || pem.length === 0)
      return fail(`${where}.pem: must be a PEM string`);
    if (!isIsoInstant(notAfter)) return fail(`${where}.notAfter: must be an ISO 8601 UTC instant`);
    const entry: CaCertificateEntry = { pem, state, notAfter };
    if (activateAfter !== undefined) {
      if (!isIsoInstant(activateAfter))
        return fail(`${where}.activateAfter: must be an ISO 8601 UTC instant`);
      entry.activateAfter = activateAfter;
    }
    if (state === 'retired') {
      if (!isIsoInstant(retireAfter))
        return fail(`${where}.retireAfter: required ISO 8601 UTC instant`);
      entry.retireAfter = retireAfter;
    }
    return entry;
  });
  const count = (s: CaCertificateState): number => certificates.filter((c) => c.state === s).length;
  if (count('active') !== 1) return fail('exactly one certificate must be active');
  return { version: 1, certificates };
}

/** Serialises the state canonically (sorted keys, certificates active → pending → retired). */
export function serializeCaState(state: CaState): string {
  const order: Record<CaCertificateState, number> = { active: 0, pending: 1, retired: 2 };
  const certificates = [...state.certificates].sort((a, b) => order[a.state] - order[b.state]);
  return `${canonicalJson({ version: 1, certificates })}\n`;
}

/** A CA state whose every certificate was checked against the stored key. */
export interface VerifiedCaState {
  state: CaState;
  /** The active certificate (signs new leaves). */
  active: CertificateInfo;
  /** Every certificate, parsed, in bundle order. */
  certificates: CertificateInfo[];
  /** Concatenated PEM of every certificate (active, pending, retired): `ca.crt` and the external copy. */
  bundlePem: string;
}

/**
 * Checks every certificate of a CA state against the stored workload CA key and cluster and
 * that each entry's `notAfter` is the certificate's own. CA_KEY_MISMATCH and friends surface
 * as PkiErrors; inconsistencies as INVALID_ARGUMENT.
 */
export function verifyCaState(
  state: CaState,
  key: WorkloadCaKey,
  cluster: string,
): VerifiedCaState {
  const parsed = state.certificates.map((entry, i) => {
    const cert = verifyWorkloadCaCertificate(entry.pem, key, cluster);
    if (cert.notAfter.toISOString() !== entry.notAfter) {
      throw new IdentityError(
        'INVALID_ARGUMENT',
        `checking ${CA_STATE_KEY}: certificates[${i}].notAfter ${entry.notAfter} differs from the certificate's ${cert.notAfter.toISOString()}`,
      );
    }
    return { entry, cert };
  });
  const fingerprints = new Set(parsed.map((p) => p.cert.fingerprint));
  if (fingerprints.size !== parsed.length) {
    throw new IdentityError(
      'INVALID_ARGUMENT',
      `checking ${CA_STATE_KEY}: a certificate is listed twice`,
    );
  }
  const ordered = bundleOrder(parsed);
  const active = parsed.find((p) => p.entry.state === 'active');
  if (!active)
    throw new IdentityError('INVALID_ARGUMENT', `checking ${CA_STATE_KEY}: no active certificate`);
  return {
    state,
    active: active.cert,
    certificates: ordered.map((p) => p.cert),
    bundlePem: ordered.map((p) => p.cert.pem).join(''),
  };
}

/**
 * Bundle order is by notAfter then fingerprint, not by state, so promotion (which only
 * relabels certificates) leaves `ca.crt` and the external bundle byte-identical.
 */
function bundleOrder<T extends { cert: CertificateInfo }>(items: readonly T[]): T[] {
  return [...items].sort(
    (a, b) =>
      a.cert.notAfter.getTime() - b.cert.notAfter.getTime() ||
      (a.cert.fingerprint < b.cert.fingerprint
        ? -1
        : a.cert.fingerprint > b.cert.fingerprint
          ? 1
          : 0),
  );
}
