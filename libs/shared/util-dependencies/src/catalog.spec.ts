import { hasCode } from '@podmin/util-errors';
import { CLOUDFLARED_IMAGE, IMAGE_DEPENDENCIES, overridePin, pinnedImageSource } from './catalog';
import { FILE_DEPENDENCIES, OTEL_LOGS_DEPENDENCIES } from './catalog';

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

describe('the file dependency catalog', () => {
  const byName = new Map(FILE_DEPENDENCIES.map((d) => [d.name, d]));

  it('gives release entries the default tag prefix, checksum files and architecture names', () => {
    expect(byName.get('kubelet')).toMatchObject({
      versions: { kind: 'github-releases', repo: 'kubernetes/kubernetes', tagPrefix: 'v' },
      digest: { kind: 'checksum-file', suffixes: ['.sha512', '.sha256'] },
      archNames: { amd64: 'amd64', arm64: 'arm64' },
    });
  });

  it('keeps what an entry names itself over the defaults', () => {
    expect(byName.get('gvisor')).toMatchObject({
      versions: { tagPrefix: 'release-' },
      archNames: { amd64: 'x86_64', arm64: 'aarch64' },
    });
    expect(byName.get('containerd')?.digest).toEqual({
      kind: 'checksum-file',
      suffixes: ['.sha512', '.sha256sum', '.sha256'],
    });
    expect(byName.get('podmin-agent')?.archNames).toEqual({ amd64: 'any', arm64: 'any' });
  });

  it('reads every --otel-logs package from trixie main under its own name, as a .deb', () => {
    expect(OTEL_LOGS_DEPENDENCIES.map((d) => d.name)).toEqual(['libpq5', 'fluent-bit']);
    for (const dependency of OTEL_LOGS_DEPENDENCIES) {
      expect(dependency).toMatchObject({
        versions: { kind: 'debian-packages', suite: 'trixie', component: 'main' },
        artifact: { kind: 'debian-pool' },
        extension: '.deb',
      });
      expect(dependency.versions).toHaveProperty('package', dependency.name);
    }
  });
});
