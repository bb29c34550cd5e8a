import type { Answer, StringAnswer } from 'dns-packet';
import { DNS_TTL_SECONDS } from '@podmin/agent-util-config';
import { serviceVip } from '@podmin/util-desired-state';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { isDns1123Label } from '@podmin/util-manifest';
import {
  DNS_ZONE_APEX,
  DNS_ZONE_HOSTMASTER,
  DNS_ZONE_NS,
  type ZoneSnapshot,
  type ZoneView,
} from './dns-zone-types';

// TTL of every record and the SOA minimum (negative TTL) is DNS_TTL_SECONDS: one constant, from
// which podmin-agent's shutdown derives its DNS TTL margin too.

/**
 * Replies without question of one kind, by the query's RD and CD bits and EDNS (none, DO clear,
 * DO set): `variant = RD | CD << 1 | edns << 2`. Built on first use; never mutated.
 */
export type BodySlots = (Buffer | undefined)[];
/** How many `BodySlots` variants there are. */
export const BODY_VARIANTS = 12;

/** A Service name's AAAA record and its encoded positive replies (zone-independent: reused). */
export interface ZoneRecord {
  answer: StringAnswer;
  bodies: BodySlots;
}

/** The names a zone holds: Service records by `<name>.<namespace>`, and namespaces with one. */
export interface ZoneNames {
  records: Map<string, ZoneRecord>;
  namespaces: Set<string>;
}

/** The AAAA record of Service key `<name>.<namespace>`. */
function serviceRecord(key: string, vip: string): ZoneRecord {
  return {
    answer: { type: 'AAAA', name: `${key}.${DNS_ZONE_APEX}`, ttl: DNS_TTL_SECONDS, data: vip },
    bodies: new Array<Buffer | undefined>(BODY_VARIANTS),
  };
}

/**
 * The names of a snapshot; throws a ValidationError naming every invalid field. Records of
 * `reusable` are kept, so unchanged Services cost no hashing.
 */
export function snapshotNames(
  snapshot: ZoneSnapshot,
  reusable: ReadonlyMap<string, ZoneRecord> | undefined,
): ZoneNames {
  const problems: FieldProblem[] = [];
  if (snapshot.cluster.length === 0) {
    problems.push({ field: 'cluster', message: 'must not be empty' });
  }
  if (!Number.isSafeInteger(snapshot.generation) || snapshot.generation < 0) {
    problems.push({ field: 'generation', message: 'must be a non-negative integer' });
  }
  const records = new Map<string, ZoneRecord>();
  const namespaces = new Set<string>();
  snapshot.services.forEach((service, i) => {
    const bad = [service.namespace, service.name].filter((label) => !isDns1123Label(label));
    if (bad.length > 0) {
      problems.push({
        field: `services[${i}]`,
        message: `${JSON.stringify(bad)} is not a DNS-1123 label`,
      });
      return;
    }
    const name = `${service.name}.${service.namespace}`;
    const known = reusable?.get(name);
    records.set(
      name,
      known ?? serviceRecord(name, serviceVip(snapshot.cluster, service.namespace, service.name)),
    );
    namespaces.add(service.namespace);
  });
  if (problems.length > 0) {
    throw new ValidationError('building the Service DNS zone', problems, {
      code: 'INVALID_ARGUMENT',
      fault: 'system',
    });
  }
  return { records, namespaces };
}

/** The names of a zone's `view()`, already validated and hashed where it was built. */
export function viewNames(view: ZoneView): ZoneNames {
  const records = new Map<string, ZoneRecord>();
  const namespaces = new Set<string>();
  for (const [key, vip] of view.records) {
    records.set(key, serviceRecord(key, vip));
    // Both labels are DNS-1123 (checked by build), so the first dot separates them.
    namespaces.add(key.slice(key.indexOf('.') + 1));
  }
  return { records, namespaces };
}

/** The zone's SOA record for a snapshot generation (the serial is the generation mod 2^32). */
export function zoneSoa(generation: number): Answer {
  return {
    type: 'SOA',
    name: DNS_ZONE_APEX,
    ttl: DNS_TTL_SECONDS,
    data: {
      mname: DNS_ZONE_NS,
      rname: DNS_ZONE_HOSTMASTER,
      serial: generation % 2 ** 32,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: DNS_TTL_SECONDS,
    },
  };
}

/** The zone's NS record. */
export function zoneNs(): Answer {
  return { type: 'NS', name: DNS_ZONE_APEX, ttl: DNS_TTL_SECONDS, data: DNS_ZONE_NS };
}
