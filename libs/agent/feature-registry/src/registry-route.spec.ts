import { ociResponse } from './oci-error.filter';
import type { OciResponse } from './oci-error.filter';
import { RegistryError } from './registry-error';
import { parseRegistryRoute } from './registry-route';

const DIGEST = `sha256:${'a'.repeat(64)}`;

/** The OCI response the route's refusal is answered with. */
function refusal(method: string, path: string): OciResponse {
  try {
    parseRegistryRoute(method, path);
  } catch (err) {
    if (err instanceof RegistryError) return ociResponse(err);
  }
  throw new Error(`${method} ${path} was not refused`);
}

describe('parseRegistryRoute', () => {
  it('parses base, manifest and blob routes with multi-component names', () => {
    expect(parseRegistryRoute('GET', '/v2/')).toEqual({ kind: 'base' });
    expect(parseRegistryRoute('HEAD', '/v2')).toEqual({ kind: 'base' });
    expect(parseRegistryRoute('GET', '/v2/apps/demo/hello/manifests/v1')).toEqual({
      kind: 'manifest',
      name: 'apps/demo/hello',
      reference: 'v1',
    });
    expect(parseRegistryRoute('HEAD', `/v2/apps/blobs/manifests/blobs/${DIGEST}`)).toEqual({
      kind: 'blob',
      name: 'apps/blobs/manifests',
      digest: DIGEST,
    });
  });

  it('refuses every write method with 405 and Allow', () => {
    for (const method of ['PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS']) {
      const err = refusal(method, '/v2/apps/x/manifests/v1');
      expect([err.status, err.code, err.headers['Allow']]).toEqual([
        405,
        'UNSUPPORTED',
        'GET, HEAD',
      ]);
    }
    expect(refusal('POST', '/v2/apps/x/blobs/uploads/').status).toBe(405);
  });

  it('refuses listing, uploads and unknown endpoints with 404 UNSUPPORTED', () => {
    for (const path of [
      '/v2/_catalog',
      '/v2/apps/x/tags/list',
      '/v2/apps/x/blobs/uploads/abc',
      '/v2/apps/x',
      '/healthz',
      '/v2/apps/x/referrers/y',
    ]) {
      const err = refusal('GET', path);
      expect([err.status, err.code]).toEqual([404, 'UNSUPPORTED']);
    }
  });
});
