import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { chmod, mkdir, open, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { IdentityError } from './identity-error';

/**
 * Immutable generations of credential files on the node's tmpfs, shared by the workload
 * identities and the node's log-export identity: each generation is written into a temporary
 * directory, sealed and renamed to `<id>`; a symlink selects one and is swapped atomically.
 */

/** Prefix of every temporary name a writer uses; leftovers are removed on the next write. */
export const TEMP_PREFIX = '.tmp-';
/** `<UTC time>-<16 hex of the leaf's fingerprint>`. */
export const GENERATION_ID = /^\d{8}T\d{6}Z-[0-9a-f]{16}$/;

/** Modes of a generation's files and of its sealed directory. */
export interface GenerationModes {
  file: number;
  dir: number;
}

/** `20300101T000000Z` */
export function compactUtc(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** A new generation id for a leaf issued at `now`. */
export function generationId(now: Date, fingerprint: string): string {
  return `${compactUtc(now)}-${fingerprint.slice(0, 16)}`;
}

export function modeOf(st: Stats): number {
  return st.mode & 0o777;
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export function ioError(doing: string, err: unknown): IdentityError {
  return new IdentityError('IO_ERROR', `${doing}: ${(err as Error).message}`, { cause: err });
}

/**
 * A file-system failure as an IdentityError naming the operation, path and errno, so it
 * crosses gRPC with its cause instead of as "internal error"; anything else passes unchanged.
 */
export function fileSystemError(err: unknown, doing: string): unknown {
  if (err instanceof PodminError || typeof err !== 'object' || err === null) return err;
  const { code, syscall, path: file } = err as NodeJS.ErrnoException;
  if (typeof code !== 'string' || typeof syscall !== 'string') return err;
  const denied = code === 'EPERM' || code === 'EACCES' || code === 'EROFS';
  return new IdentityError(
    denied ? 'ACCESS_DENIED' : 'IO_ERROR',
    `${doing}: ${syscall} ${file ?? ''}: ${code}${denied ? ' (permission denied)' : ''}`,
    { cause: err },
  );
}

/** fsync of a directory, so renames inside it survive a crash of the host (tmpfs aside). */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes the files into a temporary directory, seals it, and renames it to `<id>`. */
export async function writeGeneration(
  gensDir: string,
  id: string,
  files: Record<string, string>,
  modes: GenerationModes,
): Promise<void> {
  const temp = path.join(gensDir, `${TEMP_PREFIX}${id}`);
  try {
    await mkdir(temp, { mode: 0o700 });
    for (const [name, content] of Object.entries(files)) {
      const handle = await open(path.join(temp, name), 'wx', modes.file);
      try {
        await handle.writeFile(content);
        await handle.chmod(modes.file); // the umask may have narrowed the create mode
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    await chmod(temp, modes.dir);
    await rename(temp, path.join(gensDir, id));
    await syncDir(gensDir);
  } catch (err) {
    await removeTree(temp).catch(() => undefined);
    throw ioError(`writing identity generation ${path.join(gensDir, id)}`, err);
  }
}

/** Points `<dir>/<link>` at `target` atomically: a temporary symlink renamed over it. */
export async function switchLink(dir: string, link: string, target: string): Promise<void> {
  const temp = path.join(dir, `.${link}${TEMP_PREFIX}${randomBytes(6).toString('hex')}`);
  try {
    await symlink(target, temp);
    await rename(temp, path.join(dir, link));
    await syncDir(dir);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw ioError(`switching ${path.join(dir, link)} to ${target}`, err);
  }
}

/**
 * The generation id `<dir>/<link>` selects (`<gensDirName>/<id>`), or undefined when the link
 * is absent or not one of ours.
 */
export async function selectedGeneration(
  linkPath: string,
  gensDirName: string,
): Promise<string | undefined> {
  let target: string;
  try {
    target = await readlink(linkPath);
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'EINVAL')) return undefined;
    throw ioError(`reading ${linkPath}`, err);
  }
  const [dir, id, ...rest] = target.split('/');
  return dir === gensDirName && id !== undefined && GENERATION_ID.test(id) && rest.length === 0
    ? id
    : undefined;
}

/** Where one credential's generations live beside the link selecting one, and their modes. */
export interface GenerationLayout {
  /** The symlink's name. */
  link: string;
  /** The name of the directory holding the generations, beside the link. */
  generationsDir: string;
  modes: GenerationModes;
}

/** A new generation's files, named by its leaf's issue time and fingerprint. */
export interface NewGeneration {
  issuedAt: Date;
  fingerprint: string;
  files: Record<string, string>;
}

/**
 * Publishes a new generation below `dir` as `layout` says and points the link at it, returning
 * its id; leftovers of a crashed writer go first, and every other generation but `previous`
 * (kept for a reader still using it) after.
 */
export async function publishGeneration(
  dir: string,
  layout: GenerationLayout,
  generation: NewGeneration,
  previous: string | undefined,
): Promise<string> {
  const id = generationId(generation.issuedAt, generation.fingerprint);
  const gensDir = path.join(dir, layout.generationsDir);
  await removeLeftoverTemps(gensDir);
  await writeGeneration(gensDir, id, generation.files, layout.modes);
  await switchLink(dir, layout.link, `${layout.generationsDir}/${id}`);
  await prune(gensDir, new Set([id, ...(previous ? [previous] : [])]));
  return id;
}

/** Removes every generation except those in `keep`. */
export async function prune(gensDir: string, keep: ReadonlySet<string>): Promise<void> {
  for (const name of await readdir(gensDir)) {
    if (!keep.has(name) && !name.startsWith('.')) await removeTree(path.join(gensDir, name));
  }
}

/** Removes temporary directories a crashed writer left behind. */
export async function removeLeftoverTemps(gensDir: string): Promise<void> {
  for (const name of await readdir(gensDir)) {
    if (name.startsWith(TEMP_PREFIX)) await removeTree(path.join(gensDir, name));
  }
}

/** Removes a sealed generation: it must be made writable again first for non-root owners. */
export async function removeTree(dir: string): Promise<void> {
  await chmod(dir, 0o755).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}
