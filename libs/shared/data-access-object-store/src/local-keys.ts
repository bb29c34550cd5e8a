import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import { errnoCode } from '@podmin/util-fs';
import { assertValidKey } from './object-store.port';

// The key layout of a local directory bucket: reserved names, S3's listing order and the walk
// that lists keys in it (moved out of local-directory-object-store.ts unchanged).

/** Name prefix of in-flight temporary files; never a key segment, never listed. */
export const LOCAL_TEMP_PREFIX = '.podmin-tmp-';
/** Top-level directory of per-key lock files; never a key segment, never listed. */
export const LOCAL_LOCK_DIR = '.podmin-locks';

/** Rejects keys the local store cannot hold: invalid ones, and those using its reserved names. */
export function assertLocalKey(key: string): void {
  assertValidKey(key);
  const segments = key.split('/');
  if (segments[0] === LOCAL_LOCK_DIR || segments.some((s) => s.startsWith(LOCAL_TEMP_PREFIX))) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `object key ${JSON.stringify(key)}: "${LOCAL_LOCK_DIR}" and "${LOCAL_TEMP_PREFIX}*" are reserved by the local bucket`,
    );
  }
}

/** S3 lists keys in UTF-8 byte order, which differs from UTF-16 string order. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Yields keys under `dir` of the bucket directory `root` in S3 (UTF-8 byte) order, starting with
 * `prefix`, after `token`; temporary files and the lock directory are never keys.
 */
export async function* walkKeys(
  root: string,
  dir: string,
  keyPrefix: string,
  prefix: string,
  token: string | undefined,
): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (dir !== root && ['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) {
      return;
    }
    throw err;
  }
  // A directory sorts as "name/" so that "a-c" (0x2d) comes before "a/b" (0x2f), as in S3.
  const sorted = entries
    .filter(
      (e) => !e.name.startsWith(LOCAL_TEMP_PREFIX) && !(dir === root && e.name === LOCAL_LOCK_DIR),
    )
    .filter((e) => e.isFile() || e.isDirectory())
    .map((e) => ({ key: keyPrefix + e.name, isDirectory: e.isDirectory() }))
    .map((e) => ({ ...e, sortKey: e.isDirectory ? `${e.key}/` : e.key }))
    .sort((a, b) => compareKeys(a.sortKey, b.sortKey));
  for (const entry of sorted) {
    if (entry.isDirectory) {
      const dirKey = entry.sortKey;
      const mayMatchPrefix = dirKey.startsWith(prefix) || prefix.startsWith(dirKey);
      const entirelyBeforeToken =
        token !== undefined && compareKeys(token, dirKey) > 0 && !token.startsWith(dirKey);
      if (mayMatchPrefix && !entirelyBeforeToken) {
        yield* walkKeys(root, path.join(dir, path.basename(entry.key)), dirKey, prefix, token);
      }
    } else if (
      entry.key.startsWith(prefix) &&
      (token === undefined || compareKeys(entry.key, token) > 0)
    ) {
      yield entry.key;
    }
  }
}
