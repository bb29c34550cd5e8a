import { buildDependencyManifest, planSync, type DesiredFile } from './plan';
import { emptyDependencyManifest } from './manifest';

const file: DesiredFile = {
  name: 'kubelet',
  arch: 'amd64',
  version: '1.36.2',
  url: 'https://dl.k8s.io/release/v1.36.2/bin/linux/amd64/kubelet',
  path: 'dependencies/kubelet/kubelet-v1.36.2-linux-amd64',
  digest: `sha512:${'a'.repeat(128)}`,
};

describe('planSync', () => {
  it('treats an identical recorded file as published and reuses its size', () => {
    const published = buildDependencyManifest(
      [{ name: 'kubelet', arch: 'amd64', entry: { ...file, size: 42 } }],
      [],
    );
    const plan = planSync(published, [file], []);
    expect(plan.pendingFiles).toEqual([]);
    expect(plan.published[0]?.entry.size).toBe(42);
  });

  it('marks a new version, a changed digest or a missing entry pending', () => {
    const published = buildDependencyManifest(
      [{ name: 'kubelet', arch: 'amd64', entry: { ...file, size: 42 } }],
      [],
    );
    const changed = { ...file, digest: `sha512:${'b'.repeat(128)}` };
    const arm = {
      ...file,
      arch: 'arm64' as const,
      path: 'dependencies/kubelet/kubelet-v1.36.2-linux-arm64',
    };
    expect(planSync(published, [changed, arm], []).pendingFiles).toEqual([changed, arm]);
    const image = {
      name: 'pause',
      version: '3.10.2',
      source: 'registry.k8s.io/pause:3.10.2',
      path: 'mirror/registry.k8s.io/pause',
    };
    expect(planSync(emptyDependencyManifest(), [], [image]).pendingImages).toEqual([image]);
  });
});
