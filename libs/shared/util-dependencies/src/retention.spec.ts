import { planRetention } from './retention';

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date('2026-09-01T00:00:00Z');
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);
const key = (version: string, arch = 'amd64') =>
  `dependencies/containerd/containerd-v${version}-linux-${arch}.tar.gz`;

describe('planRetention', () => {
  it('keeps the newest two versions per architecture and deletes older ones at 28 days', () => {
    const plan = planRetention(
      [
        { key: key('2.1.4'), lastModified: ago(1) },
        { key: key('2.1.3'), lastModified: ago(40) },
        { key: key('2.1.2'), lastModified: ago(40) },
        { key: key('2.0.9'), lastModified: ago(28) },
        { key: key('2.1.1'), lastModified: ago(27) },
        { key: key('2.0.0', 'arm64'), lastModified: ago(100) },
        { key: 'dependencies/manifest.json', lastModified: ago(100) },
      ],
      NOW,
      new Set(),
    );
    expect(plan.deletions).toEqual([key('2.0.9'), key('2.1.2')]);
    expect(plan.deferred).toEqual(['containerd/amd64@2.1.1']);
  });

  it('keeps an inactive architecture, never deletes protected keys', () => {
    const objects = ['1.0.0', '1.1.0', '1.2.0'].map((v) => ({
      key: key(v, 'arm64'),
      lastModified: ago(90),
    }));
    expect(planRetention(objects, NOW, new Set()).deletions).toEqual([key('1.0.0', 'arm64')]);
    expect(planRetention(objects, NOW, new Set([key('1.0.0', 'arm64')])).deletions).toEqual([]);
  });
});
