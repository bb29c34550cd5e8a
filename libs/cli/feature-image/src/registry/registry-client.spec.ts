import type { FetchFunction } from './registry-client';
import { RegistryClient, isLoopbackHost, parseBearerChallenge } from './registry-client';

/** A scripted fetch: answers each URL from a handler and records requests. */
function fakeFetch(handler: (url: string, headers: Record<string, string>) => Response): {
  fetch: FetchFunction;
  seen: string[];
} {
  const seen: string[] = [];
  const fetch = ((input: string, init?: RequestInit) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    seen.push(`${input} ${headers['Authorization'] ?? '-'}`);
    return Promise.resolve(handler(input, headers));
  }) as FetchFunction;
  return { fetch, seen };
}

describe('RegistryClient', () => {
  it('uses HTTPS except for loopback hosts or --plain-http, and Docker Hub’s API host', () => {
    expect(new RegistryClient().baseUrl('ghcr.io')).toBe('https://ghcr.io');
    expect(new RegistryClient().baseUrl('docker.io')).toBe('https://registry-1.docker.io');
    expect(new RegistryClient().baseUrl('127.0.0.1:5000')).toBe('http://127.0.0.1:5000');
    expect(new RegistryClient().baseUrl('localhost:5000')).toBe('http://localhost:5000');
    expect(new RegistryClient({ plainHttp: true }).baseUrl('registry.lan:5000')).toBe(
      'http://registry.lan:5000',
    );
    expect(isLoopbackHost('[::1]:5000')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });

  it('reaches every registry at the test base URL override, names unchanged', async () => {
    const client = new RegistryClient({ baseUrlOverride: 'http://127.0.0.1:5999/' });
    expect(client.baseUrl('docker.io')).toBe('http://127.0.0.1:5999');
    const { fetch, seen } = fakeFetch(() => new Response('{}', { status: 200 }));
    await new RegistryClient({ fetch, baseUrlOverride: 'http://127.0.0.1:5999' }).getManifest(
      'docker.io',
      'cloudflare/cloudflared',
      '2026.8.2',
    );
    expect(seen).toEqual(['http://127.0.0.1:5999/v2/cloudflare/cloudflared/manifests/2026.8.2 -']);
  });

  it('parses Bearer challenges and ignores other schemes', () => {
    expect(
      parseBearerChallenge(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"',
      ),
    ).toEqual({
      realm: 'https://auth.docker.io/token',
      service: 'registry.docker.io',
      scope: 'repository:library/nginx:pull',
    });
    expect(parseBearerChallenge('Basic realm="x"')).toBeUndefined();
  });

  it('answers a 401 with a token from the realm and retries with it', async () => {
    const { fetch, seen } = fakeFetch((url, headers) => {
      if (url.startsWith('https://auth.example/token'))
        return Response.json({ access_token: 'abc' });
      if (headers['Authorization'] !== 'Bearer abc') {
        return new Response('', {
          status: 401,
          headers: {
            'www-authenticate': 'Bearer realm="https://auth.example/token",service="reg"',
          },
        });
      }
      return new Response('{"schemaVersion":2}', {
        headers: { 'docker-content-digest': 'sha256:x' },
      });
    });
    const client = new RegistryClient({ fetch });
    const manifest = await client.getManifest('reg.example', 'acme/web', 'v1');
    expect(manifest.bytes.toString()).toBe('{"schemaVersion":2}');
    expect(seen).toEqual([
      'https://reg.example/v2/acme/web/manifests/v1 -',
      'https://auth.example/token?service=reg&scope=repository%3Aacme%2Fweb%3Apull -',
      'https://reg.example/v2/acme/web/manifests/v1 Bearer abc',
    ]);
    await client.getManifest('reg.example', 'acme/web', 'v2');
    expect(seen.at(-1)).toBe('https://reg.example/v2/acme/web/manifests/v2 Bearer abc');
  });

  it('maps refusals to typed errors: Basic auth, plain-HTTP realms, 404', async () => {
    const basic = fakeFetch(
      () => new Response('', { status: 401, headers: { 'www-authenticate': 'Basic realm="r"' } }),
    );
    await expect(
      new RegistryClient({ fetch: basic.fetch }).getManifest('r.example', 'a', 'v1'),
    ).rejects.toMatchObject({
      code: 'ACCESS_DENIED',
    });
    const plain = fakeFetch(
      () =>
        new Response('', {
          status: 401,
          headers: { 'www-authenticate': 'Bearer realm="http://evil.example/t"' },
        }),
    );
    await expect(
      new RegistryClient({ fetch: plain.fetch }).getManifest('r.example', 'a', 'v1'),
    ).rejects.toThrow(/not HTTPS/);
    const missing = fakeFetch(() =>
      Response.json(
        { errors: [{ code: 'MANIFEST_UNKNOWN', message: 'no such tag' }] },
        { status: 404 },
      ),
    );
    await expect(
      new RegistryClient({ fetch: missing.fetch }).getManifest('r.example', 'a', 'v1'),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('MANIFEST_UNKNOWN no such tag'),
    });
  });
});
