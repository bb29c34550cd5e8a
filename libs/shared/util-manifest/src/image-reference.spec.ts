import { clusterDestination, formatReference } from '@podmin/util-oci';
import { CLUSTER_REGISTRY, checkClusterImage, resolveClusterImage } from './image-reference';
import { captureError } from './__fixtures__/capture-error';

const SHA256 = 'a'.repeat(64);
const SHA512 = '0123456789abcdef'.repeat(8);

describe('resolveClusterImage', () => {
  it('uses the cluster registry host', () => {
    expect(CLUSTER_REGISTRY).toBe('registry.podmin.internal');
  });

  it.each([
    ['hello', 'registry.podmin.internal/apps/hello:latest'],
    ['hello:v1', 'registry.podmin.internal/apps/hello:v1'],
    ['example/web:v1', 'registry.podmin.internal/apps/example/web:v1'],
    ['ab/c-d/e_f.g:V1.0_rc-1', 'registry.podmin.internal/apps/ab/c-d/e_f.g:V1.0_rc-1'],
    [`hello@sha256:${SHA256}`, `registry.podmin.internal/apps/hello@sha256:${SHA256}`],
    [`hello:v1@sha512:${SHA512}`, `registry.podmin.internal/apps/hello:v1@sha512:${SHA512}`],
    ['localhost', 'registry.podmin.internal/apps/localhost:latest'],
    [
      'registry.podmin.internal/apps/example/web:v1',
      'registry.podmin.internal/apps/example/web:v1',
    ],
    [
      'registry.podmin.internal/mirror/docker.io/library/nginx:1.27',
      'registry.podmin.internal/mirror/docker.io/library/nginx:1.27',
    ],
  ])('resolves %s', (ref, expected) => {
    expect(resolveClusterImage(ref, 'image')).toBe(expected);
  });

  it.each([
    'docker.io/library/nginx:1.27',
    'a.b/c',
    'ghcr.io/x/y',
    'localhost:5000/x',
    'localhost/x',
    'quay.io/a/b:v1',
  ])('rejects foreign registry %s with push guidance', (ref) => {
    const err = captureError(() => resolveClusterImage(ref, 'spec.containers[0].image'));
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.problems[0]?.field).toBe('spec.containers[0].image');
    expect(err.message).toContain(`podmin push ${ref}`);
    expect(err.message).toContain('use the cluster reference it prints');
    expect(err.hint).toContain(`podmin push ${ref}`);
  });

  it.each([
    ['registry.podmin.internal/other/x', 'not under registry.podmin.internal/apps/'],
    ['registry.podmin.internal/x', 'not under registry.podmin.internal/apps/'],
    ['registry.podmin.internal:443/apps/x', 'podmin push'],
    ['registry.podmin.internal/apps', 'invalid repository name'],
    ['registry.podmin.internal/apps/', 'invalid repository name'],
    ['Hello', 'invalid repository name'],
    ['hello//web', 'invalid repository name'],
    ['hello-', 'invalid repository name'],
    ['-hello', 'invalid repository name'],
    ['hel lo', 'invalid repository name'],
    ['hello:', 'invalid tag'],
    ['hello:-v1', 'invalid tag'],
    [`hello:${'a'.repeat(129)}`, 'invalid tag'],
    ['hello@sha256:abc', 'invalid digest'],
    [`hello@sha256:${'A'.repeat(64)}`, 'invalid digest'],
    [`hello@md5:${SHA256}`, 'invalid digest'],
    [`@sha256:${SHA256}`, 'invalid repository name'],
    ['', 'must not be empty'],
    [`${'a'.repeat(250)}`, 'longer than 255'],
  ])('rejects %j', (ref, message) => {
    const err = captureError(() => resolveClusterImage(ref, 'my.field'));
    expect(err.code).toBe('INVALID_MANIFEST');
    expect(err.problems[0]?.field).toBe('my.field');
    expect(err.message).toContain(message);
  });

  it('can report flag problems as INVALID_ARGUMENT', () => {
    const err = captureError(() =>
      resolveClusterImage('docker.io/x/y', '--image', 'INVALID_ARGUMENT'),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
  });

  it('checkClusterImage reports instead of throwing', () => {
    expect(checkClusterImage('hello', 'f')).toEqual({
      ok: true,
      image: 'registry.podmin.internal/apps/hello:latest',
    });
    expect(checkClusterImage('ghcr.io/x/y', 'f')).toMatchObject({
      ok: false,
      problem: { field: 'f' },
    });
  });
});

// Issue 31: one resolution rule for push destinations, --image and manifests. The examples are
// the spec's ("A shorthand destination such as hello or hello:v1 can be used unchanged with
// --image"; "Without a destination, the source registry hostname is replaced") and the CLI's.
describe('one shorthand rule for push, --image and manifests (issue 31)', () => {
  it.each<[string, string | undefined, string]>([
    ['hello:v1', 'hello', 'registry.podmin.internal/apps/hello:latest'],
    ['hello:v1', 'hello:v1', 'registry.podmin.internal/apps/hello:v1'],
    ['hello:v1', 'web', 'registry.podmin.internal/apps/web:latest'],
    ['nginx:1.27', 'web:prod', 'registry.podmin.internal/apps/web:prod'],
    ['ghcr.io/acme/web:v1', 'hello:v2', 'registry.podmin.internal/apps/hello:v2'],
    [
      'hello:v1',
      'registry.podmin.internal/apps/example/web:v1',
      'registry.podmin.internal/apps/example/web:v1',
    ],
    ['ghcr.io/acme/web:v1', undefined, 'registry.podmin.internal/apps/acme/web:v1'],
    ['nginx:1.27', undefined, 'registry.podmin.internal/apps/library/nginx:1.27'],
    ['registry.podmin.internal/apps/hello:v1', undefined, 'registry.podmin.internal/apps/hello:v1'],
  ])('push %s %s prints %s, which --image resolves to itself', (source, destination, printed) => {
    const pushed = formatReference(clusterDestination(source, destination));
    expect(pushed).toBe(printed);
    // The printed reference, used unchanged with --image or in a manifest, is the same image.
    expect(resolveClusterImage(printed, '--image')).toBe(printed);
    // A shorthand destination, used unchanged with --image, is the same image as well.
    if (destination !== undefined) {
      expect(resolveClusterImage(destination, '--image')).toBe(printed);
    }
  });

  it('keeps a digest without adding a tag, and a tag with a digest', () => {
    const digest = `sha256:${SHA256}`;
    expect(resolveClusterImage(`hello@${digest}`, 'f')).toBe(
      `registry.podmin.internal/apps/hello@${digest}`,
    );
    expect(formatReference(clusterDestination('hello:v1', `hello@${digest}`))).toBe(
      `registry.podmin.internal/apps/hello@${digest}`,
    );
  });
});
