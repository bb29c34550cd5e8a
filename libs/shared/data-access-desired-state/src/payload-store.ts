import { hasCode, PodminError } from '@podmin/util-errors';
import {
  MAX_PAYLOAD_BYTES,
  parseServiceKey,
  sha512Hex,
  parsePodKey,
  verifyPayload,
} from '@podmin/util-desired-state';
import {
  parsePodPayload,
  parseServicePayload,
  type PodPayload,
  type ServicePayload,
} from '@podmin/util-manifest';
import type { DesiredStateReader, DesiredStateStore, SignalOptions } from './desired-state.port';

/** Reads a content-addressed payload (bounded by MAX_PAYLOAD_BYTES) and verifies its SHA-512. */
export async function readPayload(
  store: Pick<DesiredStateReader, 'get'>,
  key: string,
  options: SignalOptions = {},
): Promise<Buffer> {
  const { body } = await store.get(key, {
    maxBytes: MAX_PAYLOAD_BYTES,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  verifyPayload(key, body);
  return body;
}

/** Strictly parses verified Pod payload bytes read from `key` (the manifest parser's rules). */
export function parsePodBytes(key: string, body: Buffer): PodPayload {
  if (!parsePodKey(key)) {
    throw new PodminError('INTERNAL', `reading ${key}: not a Pod payload key`);
  }
  return parsePodPayload(body.toString('utf8'), key);
}

/**
 * Strictly parses verified Service payload bytes read from `key`; the Service's namespace and
 * name must be the ones its path names, so one path cannot publish another Service identity.
 */
export function parseServiceBytes(key: string, body: Buffer): ServicePayload {
  const parts = parseServiceKey(key);
  if (!parts) throw new PodminError('INTERNAL', `reading ${key}: not a Service payload key`);
  const service = parseServicePayload(body.toString('utf8'), key);
  if (service.namespace !== parts.namespace || service.name !== parts.service) {
    throw new PodminError(
      'INVALID_MANIFEST',
      `reading ${key}: it defines Service ${service.namespace}/${service.name}, not the ${parts.namespace}/${parts.service} its path names`,
    );
  }
  return service;
}

/** Reads, verifies and strictly parses a Pod payload. */
export async function readPodPayload(
  store: Pick<DesiredStateReader, 'get'>,
  key: string,
  options: SignalOptions = {},
): Promise<PodPayload> {
  return parsePodBytes(key, await readPayload(store, key, options));
}

/** Reads, verifies and strictly parses a Service payload. */
export async function readServicePayload(
  store: Pick<DesiredStateReader, 'get'>,
  key: string,
  options: SignalOptions = {},
): Promise<ServicePayload> {
  return parseServiceBytes(key, await readPayload(store, key, options));
}

/**
 * Writes a content-addressed payload create-only; an existing object at that key is the same
 * content (the digest is in the key) and is reused. The key must name the body's digest.
 */
export async function putPayload(
  store: Pick<DesiredStateStore, 'putIfAbsent'>,
  key: string,
  body: string | Buffer,
  options: SignalOptions = {},
): Promise<void> {
  const digest = parsePodKey(key)?.digest ?? parseServiceKey(key)?.digest;
  if (digest === undefined || digest !== sha512Hex(body)) {
    throw new PodminError(
      'INTERNAL',
      `writing ${key}: the key does not name the SHA-512 of the payload`,
    );
  }
  options.signal?.throwIfAborted();
  try {
    await store.putIfAbsent(key, body);
  } catch (err) {
    if (!hasCode(err, 'PRECONDITION_FAILED')) throw err;
  }
}
