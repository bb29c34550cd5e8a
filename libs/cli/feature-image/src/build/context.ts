import { lstat, open, readdir, readlink, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { ContainerfileError } from '../containerfile/errors';
import type { CopyStep } from '../containerfile/copy-step';
import type { LayerEntry } from './layer';

/** Paths already present in the image below a step: base layers and earlier steps. */
export type KnownPaths = Map<string, 'directory' | 'other'>;

/**
 * Resolves a COPY/ADD step against the build context into layer entries: wildcard sources,
 * directory contents (symlinks inside are kept as symlinks), missing parent directories of the
 * destination (0755, root) unless the image already has them. Sources must stay inside the
 * context. ADD refuses local archives rather than extracting them.
 */
export async function collectCopy(
  step: CopyStep,
  contextDir: string,
  known: KnownPaths,
  file: string,
): Promise<LayerEntry[]> {
  const fail = (why: string): never => {
    throw new ContainerfileError(file, step.line, why);
  };
  const context = await realpath(contextDir);
  const matches: string[] = [];
  for (const source of step.sources) {
    const relative = path.posix.normalize(source.replace(/^\/+/, ''));
    if (relative === '..' || relative.startsWith('../')) {
      fail(`${step.keyword} ${source}: the source is outside the build context`);
    }
    const found = /[*?[]/.test(relative)
      ? await glob(context, relative === '.' ? [] : relative.split('/'))
      : [relative];
    if (found.length === 0) fail(`${step.keyword} ${source}: no file in the build context matches`);
    matches.push(...found);
  }
  const destIsDir =
    step.destination.endsWith('/') ||
    matches.length > 1 ||
    known.get(step.destination.replace(/^\/+|\/+$/g, '')) === 'directory';
  const dest = step.destination.replace(/^\/+|\/+$/g, '');
  const entries = new Map<string, LayerEntry>();
  const owner = { uid: step.uid, gid: step.gid };
  const add = (entry: LayerEntry): void => {
    entries.set(entry.path, entry);
  };
  for (const relative of matches) {
    const absolute = path.join(context, relative);
    let info: Stats;
    let real: string;
    try {
      real = await realpath(absolute);
      info = await stat(real);
    } catch {
      return fail(`${step.keyword} ${relative}: not found in the build context ${contextDir}`);
    }
    if (real !== context && !real.startsWith(context + path.sep)) {
      fail(`${step.keyword} ${relative}: it resolves outside the build context`);
    }
    if (info.isDirectory()) {
      if (dest !== '') add(dirEntry(dest, step.mode ?? 0o755, owner));
      await walk(real, dest, step, owner, add, fail);
    } else if (info.isFile()) {
      if (step.keyword === 'ADD' && (await isArchive(real))) {
        fail(
          `ADD ${relative}: podmin build does not extract archives; unpack it into the build context and COPY the files, or COPY the archive itself`,
        );
      }
      const target = destIsDir ? path.posix.join(dest, path.posix.basename(relative)) : dest;
      if (target === '') fail(`${step.keyword} ${relative}: the destination must not be /`);
      add(fileEntry(target, real, info, step.mode, owner));
    } else {
      fail(`${step.keyword} ${relative}: only files, directories and symlinks can be copied`);
    }
  }
  // Parent directories the image does not have yet.
  for (const entry of [...entries.values()]) {
    let parent = path.posix.dirname(entry.path);
    while (
      parent !== '.' &&
      parent !== '/' &&
      !entries.has(parent) &&
      known.get(parent) !== 'directory'
    ) {
      add(dirEntry(parent, 0o755, { uid: 0, gid: 0 }));
      parent = path.posix.dirname(parent);
    }
  }
  for (const entry of entries.values()) {
    known.set(entry.path, entry.type === 'directory' ? 'directory' : 'other');
  }
  return [...entries.values()];
}

async function walk(
  dir: string,
  dest: string,
  step: CopyStep,
  owner: { uid: number; gid: number },
  add: (entry: LayerEntry) => void,
  fail: (why: string) => never,
): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    const source = path.join(dir, name);
    const target = dest === '' ? name : `${dest}/${name}`;
    const info = await lstat(source);
    if (info.isSymbolicLink()) {
      add({
        path: target,
        type: 'symlink',
        mode: 0o777,
        ...owner,
        size: 0,
        linkname: await readlink(source),
      });
    } else if (info.isDirectory()) {
      add(dirEntry(target, step.mode ?? info.mode & 0o7777, owner));
      await walk(source, target, step, owner, add, fail);
    } else if (info.isFile()) {
      add(fileEntry(target, source, info, step.mode, owner));
    } else {
      fail(`${step.keyword}: ${source} is not a file, directory or symlink`);
    }
  }
}

function dirEntry(target: string, mode: number, owner: { uid: number; gid: number }): LayerEntry {
  return { path: target, type: 'directory', mode, ...owner, size: 0 };
}

function fileEntry(
  target: string,
  source: string,
  info: Stats,
  mode: number | undefined,
  owner: { uid: number; gid: number },
): LayerEntry {
  return {
    path: target,
    type: 'file',
    mode: mode ?? info.mode & 0o7777,
    ...owner,
    size: info.size,
    source,
  };
}

/** Matches wildcard path segments (`*`, `?`, `[...]`, as Go's filepath.Match) below `dir`. */
async function glob(dir: string, segments: string[], prefix = ''): Promise<string[]> {
  const [head, ...rest] = segments;
  if (head === undefined) return [prefix === '' ? '.' : prefix];
  const join = (name: string): string => (prefix === '' ? name : `${prefix}/${name}`);
  if (!/[*?[]/.test(head)) {
    try {
      await lstat(path.join(dir, head));
    } catch {
      return [];
    }
    return glob(path.join(dir, head), rest, join(head));
  }
  const pattern = new RegExp(`^${segmentPattern(head)}$`);
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const results: string[] = [];
  for (const name of names.filter((n) => pattern.test(n))) {
    results.push(...(await glob(path.join(dir, name), rest, join(name))));
  }
  return results;
}

function segmentPattern(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] ?? '';
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close === -1) {
        out += '\\[';
      } else {
        const body = glob.slice(i + 1, close).replace(/^\^/, '!');
        out += `[${body.startsWith('!') ? '^' + body.slice(1) : body}]`;
        i = close;
      }
    } else out += ch.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return out;
}

/** True for the archive formats `ADD` would extract: tar, gzip, bzip2, xz. */
async function isArchive(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(265);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const bytes = head.subarray(0, bytesRead);
    return (
      (bytes[0] === 0x1f && bytes[1] === 0x8b) ||
      bytes.subarray(0, 3).toString('latin1') === 'BZh' ||
      bytes.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) ||
      bytes.subarray(257, 262).toString('latin1') === 'ustar'
    );
  } finally {
    await handle.close();
  }
}
