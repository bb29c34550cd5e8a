import { PodminError } from '@podmin/util-errors';
import { assertValidKey } from './object-store.port';

describe('assertValidKey', () => {
  it.each(['deployments/index.json', 'apps/web/blobs/sha256/abc', '.podmin-probe/x', 'a', 'é/ü'])(
    'accepts %j',
    (key) => {
      expect(() => assertValidKey(key)).not.toThrow();
    },
  );

  it.each([
    '',
    '/abs',
    'trailing/',
    'a//b',
    'a/./b',
    'a/../b',
    '..',
    'back\\slash',
    'nul\0byte',
    'x'.repeat(1025),
  ])('rejects %j with INVALID_ARGUMENT', (key) => {
    expect(() => assertValidKey(key)).toThrow(PodminError);
    expect(() => assertValidKey(key)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error,
    );
  });
});
