import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { makeTempDir } from '@podmin/testing';
import { buildAgentFromSource } from './agent-source';

describe('buildAgentFromSource', () => {
  it('runs the checkout bundler and records the archive with its SHA-512', async () => {
    const checkout = await makeTempDir('podmin-checkout');
    try {
      await mkdir(`${checkout.path}/tools/scripts`, { recursive: true });
      // A stand-in bundler with the repository's interface: `bundle.mjs artifact --build`
      // writes the archive (and its checksum file) to dist/artifact.
      await writeFile(
        `${checkout.path}/tools/scripts/bundle.mjs`,
        [
          "import fs from 'node:fs';",
          "if (process.argv.slice(2).join(' ') !== 'artifact --build') process.exit(2);",
          "fs.mkdirSync('dist/artifact', { recursive: true });",
          "fs.writeFileSync('dist/artifact/podmin-agent-v0.1.0.tar.gz', 'archive bytes\\n');",
          "fs.writeFileSync('dist/artifact/podmin-agent-v0.1.0.tar.gz.sha512', 'x\\n');",
        ].join('\n'),
      );
      const artifact = await buildAgentFromSource(checkout.path, '0.1.0');
      const hex = createHash('sha512').update('archive bytes\n').digest('hex');
      expect(artifact).toEqual({
        version: `0.1.0-source.${hex.slice(0, 12)}`,
        url: pathToFileURL(`${checkout.path}/dist/artifact/podmin-agent-v0.1.0.tar.gz`).href,
        digest: `sha512:${hex}`,
        size: 14,
      });
    } finally {
      await checkout.cleanup();
    }
  });

  it('reports a checkout that cannot build', async () => {
    const empty = await makeTempDir('podmin-empty');
    try {
      await expect(buildAgentFromSource(empty.path, '0.1.0')).rejects.toMatchObject({
        code: 'IO_ERROR',
        message: expect.stringContaining('building the podmin-agent artifact'),
      });
    } finally {
      await empty.cleanup();
    }
  });

  it('reports a bundler that writes no archive', async () => {
    const checkout = await makeTempDir('podmin-checkout');
    try {
      await mkdir(`${checkout.path}/tools/scripts`, { recursive: true });
      await writeFile(`${checkout.path}/tools/scripts/bundle.mjs`, 'process.exit(0);\n');
      await expect(buildAgentFromSource(checkout.path, '0.1.0')).rejects.toMatchObject({
        code: 'IO_ERROR',
        message: expect.stringContaining('expected one podmin-agent-v<version>.tar.gz'),
      });
    } finally {
      await checkout.cleanup();
    }
  });
});
