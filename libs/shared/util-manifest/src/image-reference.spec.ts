import { ValidationError } from '@podmin/util-errors';
import { CLUSTER_REGISTRY, checkClusterImage, resolveClusterImage } from './image-reference';

function captureError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) {
      return err;
    }
    throw err;
  }
  throw new Error('expected a ValidationError');
}

const SHA256 = 'a'.repeat(64);
const SHA512 = '0123456789abcdef'.repeat(8);

describe('resolveClusterImage', () => {
  it('uses the cluster registry host', () => {
    expect(CLUSTER_REGISTRY).toBe('registry.podmin.internal');
  });

  it.each([
    ['hello', 'registry.podmin.internal/apps/hello'],
    ['hello:v1', 'registry.podmin.internal/apps/hello:v1'],
    ['example/web:v1', 'registry.podmin.internal/apps/example/web:v1'],
    ['ab/c-d/e_f.g:V1.0_rc-1', 'registry.podmin.internal/apps/ab/c-d/e_f.g:V1.0_rc-1'],
    [`hello@sha256:${SHA256}`, `registry.podmin.internal/apps/hello@sha256:${SHA256}`],
    [`hello:v1@sha512:${SHA512}`, `registry.podmin.internal/apps/hello:v1@sha512:${SHA512}`],
    ['localhost', 'registry.podmin.internal/apps/localhost'],
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
      image: 'registry.podmin.internal/apps/hello',
    });
    expect(checkClusterImage('ghcr.io/x/y', 'f')).toMatchObject({
      ok: false,
      problem: { field: 'f' },
    });
  });
});
