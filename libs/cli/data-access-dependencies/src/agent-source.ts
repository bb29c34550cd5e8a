import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PodminError } from '@podmin/util-errors';
import { sha512Digest } from '@podmin/util-oci';
import type { AgentArtifact } from './resolver';

/** Where the repository's bundler writes the agent artifact, relative to the checkout. */
export const AGENT_ARTIFACT_DIR = 'dist/artifact';

/**
 * Builds the podmin-agent artifact from a podmin checkout with the repository's own bundler
 * (`node tools/scripts/bundle.mjs artifact --build`: every agent bundle, then the one archive
 * a node installs) and records the archive: version
 * `<cli version>-source.<first 12 hex of its SHA-512>`, a `file:` URL, SHA-512 digest and size.
 */
export async function buildAgentFromSource(
  checkout: string,
  cliVersion: string,
  timeoutMs = 10 * 60_000,
): Promise<AgentArtifact> {
  const root = path.resolve(checkout);
  const failed = (why: string, cause?: unknown) =>
    new PodminError('IO_ERROR', `building the podmin-agent artifact in ${root}: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
      hint: 'Run `npm ci` in the checkout, or pass the root of a podmin checkout.',
      fault: 'user',
    });
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join('tools', 'scripts', 'bundle.mjs'), 'artifact', '--build'],
      { cwd: root, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (err) reject(failed(stderr.trim() || err.message, err));
        else resolve();
      },
    );
  });
  // The bundler names the archive after the checkout's version; it writes exactly one.
  const dir = path.join(root, AGENT_ARTIFACT_DIR);
  const archives = (await readdir(dir).catch(() => [] as string[])).filter((n) =>
    /^podmin-agent-v[^/]+\.tar\.gz$/.test(n),
  );
  if (archives.length !== 1) {
    throw failed(
      `expected one podmin-agent-v<version>.tar.gz in ${AGENT_ARTIFACT_DIR}, found ${archives.length}`,
    );
  }
  const archive = path.join(dir, archives[0] as string);
  const body = await readFile(archive);
  const digest = sha512Digest(body);
  return {
    version: `${cliVersion}-source.${digest.slice('sha512:'.length, 'sha512:'.length + 12)}`,
    url: pathToFileURL(archive).href,
    digest,
    size: body.length,
  };
}
