import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { UDP_WORKER_BUNDLE } from '../udp-fast-path';

const root = path.resolve(__dirname, '../../../../..');

/**
 * Bundles udp-worker.ts as the agent-dns build does (a worker thread runs JavaScript, not the
 * TypeScript jest runs) into a temporary directory, koffi left to `require` through a
 * node_modules link there; returns the file and a function removing the directory.
 */
export async function buildUdpWorker(): Promise<{ file: string; remove: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-dns-udp-'));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  const file = path.join(dir, UDP_WORKER_BUNDLE);
  await build({
    entryPoints: [path.join(root, 'libs/agent/feature-dns/src/udp-worker.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    tsconfig: path.join(root, 'tsconfig.base.json'),
    external: ['koffi'],
    logLevel: 'warning',
  });
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
