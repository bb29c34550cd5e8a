import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PodminError } from '@podmin/util-errors';
import { sha512Digest } from '@podmin/util-oci';
import type { AgentArtifact } from './resolver';

/** Where the repository's build writes the agent bundle, relative to the checkout. */
export const AGENT_BUNDLE_PATH = 'dist/bin/podmin-agent.cjs';

/**
 * Builds podmin-agent from a podmin checkout with the repository's own bundler
 * (`node tools/scripts/bundle.mjs agent`) and records the bundle: version
 * `<cli version>-source.<first 12 hex of its SHA-512>`, a `file:` URL, SHA-512 digest and size.
 */
export async function buildAgentFromSource(
  checkout: string,
  cliVersion: string,
  timeoutMs = 5 * 60_000,
): Promise<AgentArtifact> {
  const root = path.resolve(checkout);
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join('tools', 'scripts', 'bundle.mjs'), 'agent'],
      { cwd: root, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (err) {
          reject(
            new PodminError(
              'IO_ERROR',
              `building podmin-agent in ${root}: ${stderr.trim() || err.message}`,
              {
                cause: err,
                hint: 'Run `npm ci` in the checkout, or pass the root of a podmin checkout.',
                fault: 'user',
              },
            ),
          );
        } else {
          resolve();
        }
      },
    );
  });
  const bundle = path.join(root, AGENT_BUNDLE_PATH);
  const body = await readFile(bundle);
  const digest = sha512Digest(body);
  return {
    version: `${cliVersion}-source.${digest.slice('sha512:'.length, 'sha512:'.length + 12)}`,
    url: pathToFileURL(bundle).href,
    digest,
    size: body.length,
  };
}
