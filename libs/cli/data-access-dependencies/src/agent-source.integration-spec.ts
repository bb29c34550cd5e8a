import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { makeTempDir } from '@podmin/testing';
import { buildAgentFromSource } from './agent-source';

describe('buildAgentFromSource', () => {
  it('runs the checkout bundler and records the bundle with its SHA-512', async () => {
    const checkout = await makeTempDir('podmin-checkout');
    try {
      await mkdir(`${checkout.path}/tools/scripts`, { recursive: true });
      // A stand-in bundler with the repository's interface: `bundle.mjs agent` writes dist/bin.
      await writeFile(
        `${checkout.path}/tools/scripts/bundle.mjs`,
        [
          "import fs from 'node:fs';",
          "if (process.argv[2] !== 'agent') process.exit(2);",
          "fs.mkdirSync('dist/bin', { recursive: true });",
          "fs.writeFileSync('dist/bin/podmin-agent.cjs', 'console.log(1);\\n');",
        ].join('\n'),
      );
      const artifact = await buildAgentFromSource(checkout.path, '0.1.0');
      const hex = createHash('sha512').update('console.log(1);\n').digest('hex');
      expect(artifact).toEqual({
        version: `0.1.0-source.${hex.slice(0, 12)}`,
        url: pathToFileURL(`${checkout.path}/dist/bin/podmin-agent.cjs`).href,
        digest: `sha512:${hex}`,
        size: 16,
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
        message: expect.stringContaining('building podmin-agent'),
      });
    } finally {
      await empty.cleanup();
    }
  });
});
