import { hasCode } from '@podmin/util-errors';
import { CLOUDFLARED_IMAGE, IMAGE_DEPENDENCIES, overridePin, pinnedImageSource } from './catalog';

describe('the cloudflared pin', () => {
  it('names the upstream multi-platform index by version and sha256 digest', () => {
    expect(pinnedImageSource(CLOUDFLARED_IMAGE)).toBe('docker.io/cloudflare/cloudflared:2026.8.2');
    expect(CLOUDFLARED_IMAGE.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Object.isFrozen(CLOUDFLARED_IMAGE)).toBe(true);
  });

  it('is not a setup dependency image (setup never mirrors it)', () => {
    expect(IMAGE_DEPENDENCIES.map((i) => i.name)).not.toContain('cloudflared');
  });

  it('takes a whole <version>@<digest> override and refuses anything else', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(overridePin(CLOUDFLARED_IMAGE, `1.2.3@${digest}`)).toEqual({
      ...CLOUDFLARED_IMAGE,
      version: '1.2.3',
      digest,
    });
    expect(CLOUDFLARED_IMAGE.version).toBe('2026.8.2');
    for (const bad of [
      '1.2.3',
      `@${digest}`,
      `1.2.3@sha256:${'ab'.repeat(31)}`,
      `1.2.3@${digest} `,
    ]) {
      let caught: unknown;
      try {
        overridePin(CLOUDFLARED_IMAGE, bad);
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'CONFIG_INVALID')).toBe(true);
    }
  });
});
