import { RegistryError } from './registry-error';

/** One request the registry understands, parsed from method and raw path. */
export type RegistryRoute =
  | { kind: 'base' }
  | { kind: 'manifest'; name: string; reference: string }
  | { kind: 'blob'; name: string; digest: string };

/** Methods that only read; every other method is refused with 405. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * Parses a distribution API request from its method and raw (undecoded) path. The name is
 * everything between `/v2/` and the last `/manifests/<reference>` or `/blobs/<digest>`;
 * it is validated by the service. Writes, listing and uploads are refused here (RegistryError).
 */
export function parseRegistryRoute(method: string, rawPath: string): RegistryRoute {
  if (!READ_METHODS.has(method.toUpperCase())) {
    throw new RegistryError('READ_ONLY', `${method} is not supported: this registry is read-only`);
  }
  if (rawPath === '/v2' || rawPath === '/v2/') {
    return { kind: 'base' };
  }
  if (!rawPath.startsWith('/v2/')) {
    throw new RegistryError(
      'ENDPOINT_UNSUPPORTED',
      `${rawPath.slice(0, 200)} is not a distribution API path`,
    );
  }
  const segments = rawPath.slice('/v2/'.length).split('/');
  if (
    segments[0] === '_catalog' ||
    (segments.length >= 3 && segments.slice(-2).join('/') === 'tags/list')
  ) {
    throw new RegistryError('ENDPOINT_UNSUPPORTED', 'listing is not supported by this registry');
  }
  if (
    segments.length >= 3 &&
    segments.includes('uploads') &&
    segments[segments.indexOf('uploads') - 1] === 'blobs'
  ) {
    throw new RegistryError(
      'ENDPOINT_UNSUPPORTED',
      'uploads are not supported: this registry is read-only',
    );
  }
  const last = segments[segments.length - 1] ?? '';
  const kind = segments[segments.length - 2];
  const name = segments.slice(0, -2).join('/');
  if (segments.length >= 3 && kind === 'manifests') {
    return { kind: 'manifest', name, reference: last };
  }
  if (segments.length >= 3 && kind === 'blobs') {
    return { kind: 'blob', name, digest: last };
  }
  throw new RegistryError(
    'ENDPOINT_UNSUPPORTED',
    `${rawPath.slice(0, 200)} is not a supported distribution API endpoint`,
  );
}
