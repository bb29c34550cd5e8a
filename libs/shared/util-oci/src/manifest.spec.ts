import { sha256Digest } from './digest';
import { parseImageConfig } from './image-config';
import { MAX_MANIFEST_BYTES, parseImageIndex, parseImageManifest, parseManifest } from './manifest';
import {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  OCI_CONFIG_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_LAYER_GZIP_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
} from './media-types';

const digest = sha256Digest('x');
const manifest = {
  schemaVersion: 2,
  mediaType: OCI_MANIFEST_MEDIA_TYPE,
  config: { mediaType: OCI_CONFIG_MEDIA_TYPE, digest, size: 10 },
  layers: [{ mediaType: OCI_LAYER_GZIP_MEDIA_TYPE, digest, size: 20, annotations: { a: 'b' } }],
  unknownField: { ignored: true },
};

describe('parseManifest', () => {
  it('parses an OCI manifest and ignores unknown fields', () => {
    const parsed = parseImageManifest(JSON.stringify(manifest));
    expect(parsed.config.size).toBe(10);
    expect(parsed.layers[0]?.annotations).toEqual({ a: 'b' });
    expect(parsed).not.toHaveProperty('unknownField');
  });

  it('tells an index from a manifest by media type or fields', () => {
    const index = {
      schemaVersion: 2,
      manifests: [
        {
          mediaType: OCI_MANIFEST_MEDIA_TYPE,
          digest,
          size: 5,
          platform: { os: 'linux', architecture: 'arm64', variant: 'v8' },
        },
      ],
    };
    const parsed = parseManifest(JSON.stringify(index));
    expect(parsed.kind).toBe('index');
    expect(parsed.mediaType).toBe(OCI_INDEX_MEDIA_TYPE);
    const docker = parseManifest(
      JSON.stringify({ ...index, mediaType: DOCKER_MANIFEST_LIST_MEDIA_TYPE }),
    );
    expect(docker.mediaType).toBe(DOCKER_MANIFEST_LIST_MEDIA_TYPE);
    expect(parseImageIndex(JSON.stringify(index)).manifests[0]?.platform?.variant).toBe('v8');
    expect(() => parseImageIndex(JSON.stringify(manifest))).toThrow(/not an index/);
  });

  it('rejects other schema versions, bad digests, sizes and non-objects', () => {
    expect(() => parseManifest(JSON.stringify({ ...manifest, schemaVersion: 1 }))).toThrow(
      /schemaVersion must be 2/,
    );
    expect(() =>
      parseManifest(
        JSON.stringify({ ...manifest, config: { ...manifest.config, digest: 'sha256:XYZ' } }),
      ),
    ).toThrow(/config.digest must be a sha256 or sha512 digest/);
    expect(() =>
      parseManifest(JSON.stringify({ ...manifest, config: { ...manifest.config, size: -1 } })),
    ).toThrow(/config.size must be a non-negative integer/);
    expect(() => parseManifest('[]')).toThrow(/must be a JSON object/);
    expect(() => parseManifest(JSON.stringify({ ...manifest, mediaType: 'text/plain' }))).toThrow(
      /not an OCI or Docker/,
    );
    expect(() => parseManifest(Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20))).toThrow(/byte limit/);
    expect(() => parseManifest('{"schemaVersion":2,"schemaVersion":2,"manifests":[]}')).toThrow(
      /duplicate key/,
    );
  });
});

describe('parseImageConfig', () => {
  it('reads the execution parameters and rootfs', () => {
    const config = parseImageConfig(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          User: '1000',
          Env: ['A=1'],
          Entrypoint: ['/hello'],
          WorkingDir: '/app',
          ExposedPorts: { '80/tcp': {} },
        },
        rootfs: { type: 'layers', diff_ids: [digest] },
        history: [{ created_by: 'COPY hello /', empty_layer: false }],
      }),
    );
    expect(config.config).toEqual({
      User: '1000',
      Env: ['A=1'],
      Entrypoint: ['/hello'],
      WorkingDir: '/app',
      ExposedPorts: { '80/tcp': {} },
    });
    expect(config.rootfs.diff_ids).toEqual([digest]);
    expect(() =>
      parseImageConfig(
        JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'x', diff_ids: [] } }),
      ),
    ).toThrow(/rootfs.type must be "layers"/);
    expect(() =>
      parseImageConfig(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          rootfs: { type: 'layers', diff_ids: ['x'] },
        }),
      ),
    ).toThrow(/diff_ids\[0\]/);
  });
});
