import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';

/** The bundled node registry (`nx run agent-registry:build`). */
export const REGISTRY_BIN = path.resolve(__dirname, '../../../../../dist/bin/agent-registry.cjs');

/** A registry process serving a bucket on a loopback port. */
export interface RegistryProcess {
  /** `127.0.0.1:<port>`. */
  host: string;
  /** Its process id (for RSS sampling). */
  pid: number;
  /** Stops it and waits for the exit. */
  stop: () => Promise<void>;
}

/**
 * Starts `dist/bin/agent-registry.cjs` with the agent's flags (`flags` name the provider,
 * bucket and region) on an ephemeral loopback port, its sockets under a temporary node root,
 * and resolves once it logs its `listen` event.
 */
export function startRegistryProcess(
  flags: string[],
  env: Record<string, string> = {},
): Promise<RegistryProcess> {
  if (!existsSync(REGISTRY_BIN)) {
    throw new Error(`${REGISTRY_BIN} is missing: run \`npx nx run agent-registry:build\``);
  }
  const nodeRoot = mkdtempSync(path.join(os.tmpdir(), 'podmin-registry-node-'));
  const child = spawn(
    process.execPath,
    [
      REGISTRY_BIN,
      ...flags,
      '--cluster',
      'test',
      '--nodegroup',
      'default',
      '--ipv6-prefix',
      '2600:1f14:abc:1200:1::/80',
    ],
    {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        PODMIN_NODE_ROOT: nodeRoot,
        PODMIN_AGENT_REGISTRY_LISTEN: '127.0.0.1:0',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      rmSync(nodeRoot, { recursive: true, force: true });
      resolve();
    }),
  );
  const log: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`registry did not start within 20 s: ${log.slice(-5).join('\n')}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`registry exited with ${code}: ${log.slice(-5).join('\n')}`));
    });
    createInterface({ input: child.stderr }).on('line', (line) => {
      log.push(line);
      try {
        const event = JSON.parse(line) as { msg?: string; port?: number };
        if (event.msg === 'listen' && typeof event.port === 'number') {
          clearTimeout(timer);
          resolve({
            host: `127.0.0.1:${event.port}`,
            pid: child.pid ?? 0,
            stop: async () => {
              child.kill('SIGTERM');
              await exited;
            },
          });
        }
      } catch {
        // not a JSON line
      }
    });
  });
}

/** One entry of a layer tar as the image runtime would see it. */
export interface TarFile {
  /** Entry type. */
  type: string;
  /** Permission bits. */
  mode: number;
  /** Owner. */
  uid: number;
  /** Group. */
  gid: number;
  /** Content (files). */
  body: string;
}

/** Reads a gzip layer into a map of path → entry. */
export async function readLayer(gzipped: Buffer): Promise<Map<string, TarFile>> {
  const files = new Map<string, TarFile>();
  const tar = extract();
  const done = new Promise<void>((resolve, reject) => {
    tar.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        files.set(header.name, {
          type: header.type ?? 'file',
          mode: header.mode ?? 0,
          uid: header.uid ?? 0,
          gid: header.gid ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        next();
      });
    });
    tar.on('finish', resolve);
    tar.on('error', reject);
  });
  tar.end(gunzipSync(gzipped));
  await done;
  return files;
}
