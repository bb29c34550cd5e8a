import {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
} from '@podmin/util-oci';
import { isAcceptable } from './negotiation';

describe('isAcceptable', () => {
  it('accepts anything without an Accept header or with */*', () => {
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, undefined)).toBe(true);
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, '')).toBe(true);
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, 'application/json, */*;q=0.5')).toBe(true);
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, 'application/*')).toBe(true);
  });

  it('matches the stored type among listed types, case-insensitively and across header lines', () => {
    const containerd = [
      DOCKER_MANIFEST_MEDIA_TYPE,
      DOCKER_MANIFEST_LIST_MEDIA_TYPE,
      OCI_MANIFEST_MEDIA_TYPE,
      OCI_INDEX_MEDIA_TYPE,
    ].join(', ');
    for (const type of [
      OCI_INDEX_MEDIA_TYPE,
      OCI_MANIFEST_MEDIA_TYPE,
      DOCKER_MANIFEST_LIST_MEDIA_TYPE,
      DOCKER_MANIFEST_MEDIA_TYPE,
    ]) {
      expect(isAcceptable(type, containerd)).toBe(true);
    }
    expect(
      isAcceptable(OCI_INDEX_MEDIA_TYPE, [
        DOCKER_MANIFEST_MEDIA_TYPE,
        OCI_INDEX_MEDIA_TYPE.toUpperCase(),
      ]),
    ).toBe(true);
  });

  it('refuses a type the client did not list or excluded with q=0', () => {
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE)).toBe(false);
    expect(isAcceptable(OCI_INDEX_MEDIA_TYPE, `${OCI_INDEX_MEDIA_TYPE};q=0, */*`)).toBe(false);
    expect(isAcceptable(OCI_MANIFEST_MEDIA_TYPE, 'application/*;q=0')).toBe(false);
  });
});
