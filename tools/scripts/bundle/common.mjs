// What every part of the bundler (tools/scripts/bundle.mjs) shares: the workspace's root and
// package.json, the esbuild options of every bundle, and koffi's native modules.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

export const require = createRequire(import.meta.url);

export const root = path.resolve(import.meta.dirname, '../../..');
export const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** What every bundle of the bundler is: Node.js 20 code, minified but keeping names, with its metafile. */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  minifySyntax: true,
  minifyWhitespace: true,
  keepNames: true,
  metafile: true,
  logLevel: 'warning',
};

/** koffi's native modules a bundle carries: Linux x64 and arm64, the node architectures. */
export const KOFFI_PLATFORMS = ['linux_x64', 'linux_arm64'];
/** Copies koffi's native modules to <dir>/<platform>/koffi.node. */
export const copyKoffi = (dir) => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const platform of KOFFI_PLATFORMS) {
    const from = path.join(root, 'node_modules/koffi/build/koffi', platform, 'koffi.node');
    fs.mkdirSync(path.join(dir, platform), { recursive: true });
    fs.copyFileSync(from, path.join(dir, platform, 'koffi.node'));
  }
};
