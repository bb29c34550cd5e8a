import { gzipSync } from 'node:zlib';
import {
  OCI_CONFIG_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  OCI_LAYER_GZIP_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  blobPath,
  canonicalJsonBytes,
  emptyLayoutIndex,
  ociLayoutContent,
  serializeLayoutIndex,
  sha256Digest,
  withTag,
} from '@podmin/util-oci';
import type { Descriptor, ImageIndex } from '@podmin/util-oci';

/** One platform's image inside a test index. */
export interface TestPlatformImage {
  /** GOARCH of the platform. */
  architecture: string;
  /** Descriptor of its manifest (with platform). */
  manifest: Descriptor;
  /** Descriptor of its single gzip layer. */
  layer: Descriptor;
  /** Content of `/hello.txt` in the layer. */
  helloText: string;
}

/** A small multi-platform OCI image: every blob, the index descriptor and per-platform parts. */
export interface TestImage {
  /** Every blob by digest: layers, configs, manifests and the index. */
  blobs: Map<string, Buffer>;
  /** Descriptor of the image index. */
  index: Descriptor;
  /** The per-platform images. */
  platforms: TestPlatformImage[];
}

/**
 * Builds a linux/amd64 + linux/arm64 image whose layers hold `/hello.txt` saying which
 * platform and `salt` it is (different salts give unrelated blobs).
 */
export function buildTestImage(salt: string): TestImage {
  const blobs = new Map<string, Buffer>();
  const add = (mediaType: string, bytes: Buffer): Descriptor => {
    const digest = sha256Digest(bytes);
    blobs.set(digest, bytes);
    return { mediaType, digest, size: bytes.length };
  };
  const platforms = ['amd64', 'arm64'].map((architecture): TestPlatformImage => {
    const helloText = `hello from linux/${architecture} (${salt})\n`;
    const tar = makeTar([
      { name: 'etc/', body: undefined },
      { name: 'hello.txt', body: Buffer.from(helloText) },
    ]);
    const layer = add(OCI_LAYER_GZIP_MEDIA_TYPE, gzipSync(tar, { level: 9 }));
    const config = add(
      OCI_CONFIG_MEDIA_TYPE,
      canonicalJsonBytes({
        architecture,
        os: 'linux',
        config: { Cmd: ['/hello'], Env: ['PATH=/'] },
        rootfs: { type: 'layers', diff_ids: [sha256Digest(tar)] },
      }),
    );
    const manifestBytes = canonicalJsonBytes({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      config,
      layers: [layer],
    });
    const manifest = {
      ...add(OCI_MANIFEST_MEDIA_TYPE, manifestBytes),
      platform: { architecture, os: 'linux' },
    };
    return { architecture, manifest, layer, helloText };
  });
  const index = add(
    OCI_INDEX_MEDIA_TYPE,
    canonicalJsonBytes({
      schemaVersion: 2,
      mediaType: OCI_INDEX_MEDIA_TYPE,
      manifests: platforms.map((p) => p.manifest),
    }),
  );
  return { blobs, index, platforms };
}

/** The layout objects of `image` tagged `tag` under `repository/`, in publication order. */
export function layoutObjects(
  repository: string,
  tag: string,
  image: TestImage,
): Array<[string, Buffer]> {
  const layoutIndex: ImageIndex = withTag(emptyLayoutIndex(), {
    tag,
    image: image.index,
    nested: image.platforms.map((p) => p.manifest),
  });
  return [
    ...[...image.blobs].map(([digest, bytes]): [string, Buffer] => [
      `${repository}/${blobPath(digest)}`,
      bytes,
    ]),
    [`${repository}/oci-layout`, ociLayoutContent()],
    [`${repository}/index.json`, serializeLayoutIndex(layoutIndex)],
  ];
}

interface TarEntry {
  name: string;
  body: Buffer | undefined;
}

/** A deterministic ustar archive (mtime 0, root-owned); directories have no body. */
export function makeTar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const body = entry.body ?? Buffer.alloc(0);
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100, 'utf8');
    header.write(entry.body === undefined ? '0000755\0' : '0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148);
    header.write(entry.body === undefined ? '5' : '0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    parts.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
