import { hasCode } from '@podmin/util-errors';
import {
  parseDependencyManifest,
  parseDependencyObjectKey,
  serializeDependencyManifest,
  type DependencyManifest,
} from './manifest';

/** The example of the spec, verbatim in shape. */
const SPEC_EXAMPLE = `{
  "version": 1,
  "dependencies": {
    "containerd": {
      "amd64": {
        "version": "2.1.4",
        "url": "https://github.com/containerd/containerd/releases/download/v2.1.4/containerd-2.1.4-linux-amd64.tar.gz",
        "path": "dependencies/containerd/containerd-v2.1.4-linux-amd64.tar.gz",
        "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        "size": 39000000
      },
      "arm64": {
        "version": "2.1.4",
        "url": "https://github.com/containerd/containerd/releases/download/v2.1.4/containerd-2.1.4-linux-arm64.tar.gz",
        "path": "dependencies/containerd/containerd-v2.1.4-linux-arm64.tar.gz",
        "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        "size": 38000000
      }
    }
  },
  "images": {
    "pause": {
      "version": "3.10.2",
      "source": "registry.k8s.io/pause:3.10.2",
      "path": "mirror/registry.k8s.io/pause",
      "digest": "sha256:3333333333333333333333333333333333333333333333333333333333333333",
      "size": 1090874
    }
  }
}
`;

function problemsOf(body: string): string[] {
  try {
    parseDependencyManifest(body);
  } catch (err) {
    expect(hasCode(err, 'INVALID_MANIFEST')).toBe(true);
    return (err as { problems: Array<{ field: string }> }).problems.map((p) => p.field);
  }
  throw new Error('expected a rejection');
}

describe('dependency manifest', () => {
  it('parses the spec example and serializes it back to the same bytes', () => {
    const manifest = parseDependencyManifest(SPEC_EXAMPLE);
    expect(manifest.dependencies['containerd']?.arm64?.size).toBe(38000000);
    expect(manifest.images['pause']?.path).toBe('mirror/registry.k8s.io/pause');
    expect(serializeDependencyManifest(manifest)).toBe(SPEC_EXAMPLE);
  });

  it('serializes canonically whatever the insertion order', () => {
    const a = parseDependencyManifest(SPEC_EXAMPLE);
    const b: DependencyManifest = {
      version: 1,
      images: a.images,
      dependencies: {
        containerd: {
          arm64: a.dependencies['containerd']!.arm64!,
          amd64: a.dependencies['containerd']!.amd64!,
        },
      },
    };
    expect(serializeDependencyManifest(b)).toBe(serializeDependencyManifest(a));
  });

  it('rejects unknown fields, unknown architectures, paths that disagree and bad digests', () => {
    const doc = JSON.parse(SPEC_EXAMPLE);
    doc.extra = true;
    doc.dependencies.containerd.riscv64 = doc.dependencies.containerd.amd64;
    doc.dependencies.containerd.arm64.path =
      'dependencies/containerd/containerd-v2.1.5-linux-arm64.tar.gz';
    doc.images.pause.digest = 'md5:abc';
    expect(problemsOf(JSON.stringify(doc))).toEqual(
      expect.arrayContaining([
        'extra',
        'dependencies.containerd.riscv64',
        'dependencies.containerd.arm64.path',
        'images.pause.digest',
      ]),
    );
  });

  it('rejects duplicate keys and a wrong version', () => {
    expect(problemsOf('{"version":1,"version":1,"dependencies":{},"images":{}}')).toEqual([
      '(document)',
    ]);
    expect(problemsOf('{"version":2,"dependencies":{},"images":{}}')).toEqual(['version']);
  });

  it('parses object keys of versioned files and ignores everything else', () => {
    expect(
      parseDependencyObjectKey('dependencies/cni-plugins/cni-plugins-v1.7.1-linux-arm64.tgz'),
    ).toEqual({
      name: 'cni-plugins',
      version: '1.7.1',
      arch: 'arm64',
    });
    expect(parseDependencyObjectKey('dependencies/kubelet/kubelet-v1.36.2-linux-amd64')).toEqual({
      name: 'kubelet',
      version: '1.36.2',
      arch: 'amd64',
    });
    expect(parseDependencyObjectKey('dependencies/manifest.json')).toBeUndefined();
    expect(parseDependencyObjectKey('dependencies/a/b-v1-linux-amd64')).toBeUndefined();
  });
});
