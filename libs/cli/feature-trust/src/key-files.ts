import { createPublicKey, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PodminError, ValidationError } from '@podmin/util-errors';
import { isDnsLabel } from '@podmin/util-names';
import { fingerprintOf, generateSigningKey, publicKeyOfPrivate } from '@podmin/util-trust';

/** Suffix of a local private signing key under the trust directory. */
export const PRIVATE_KEY_SUFFIX = '.key';
/** Suffix of its public key beside it. */
export const PUBLIC_KEY_SUFFIX = '.pub';

/** Where a cluster's local signing keys live: `<config>/trust/<cluster>/` (0700). */
export function trustKeyDir(configDir: string, cluster: string): string {
  return path.join(configDir, 'trust', cluster);
}

/**
 * A deployer name from a local user name: lower case, every run of characters a DNS label
 * cannot hold turned into one `-`, trimmed to 63 characters; `deployer` when nothing is left.
 */
export function deployerNameFromUser(user: string): string {
  const label = user
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return isDnsLabel(label) ? label : 'deployer';
}

/** Checks a deployer name given by `field` (a DNS-1123 label); returns it. */
export function assertDeployerName(name: string, field: string): string {
  if (!isDnsLabel(name)) {
    throw new ValidationError(
      'naming the deployer',
      [
        {
          field,
          message: `${JSON.stringify(name)} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
  return name;
}

/** What `podmin trust keygen` wrote. */
export interface KeygenResult {
  name: string;
  privateKeyFile: string;
  publicKeyFile: string;
  fingerprint: string;
}

/**
 * Creates an Ed25519 signing key for `name`: `<dir>/<name>.key` (PKCS#8 PEM, 0600) and
 * `<dir>/<name>.pub` (SPKI PEM, 0644), the directory 0700. Refuses to replace an existing key
 * unless `force`. Each file is written whole under a temporary name and moved into place, so a
 * key file is never seen half-written.
 */
export async function generateKeyFiles(
  dir: string,
  name: string,
  force: boolean,
): Promise<KeygenResult> {
  assertDeployerName(name, '--name');
  const privateKeyFile = path.join(dir, `${name}${PRIVATE_KEY_SUFFIX}`);
  const publicKeyFile = path.join(dir, `${name}${PUBLIC_KEY_SUFFIX}`);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  if (!force) {
    for (const file of [privateKeyFile, publicKeyFile]) {
      if (await exists(file)) {
        throw new PodminError(
          'ALREADY_EXISTS',
          `creating the signing key ${name}: ${file} already exists`,
          {
            hint: 'pass --force to replace it (the old key can no longer sign), or choose another --name',
          },
        );
      }
    }
  }
  const { privatePem, publicPem } = generateSigningKey();
  await writeWhole(privateKeyFile, privatePem, 0o600, force);
  await writeWhole(publicKeyFile, publicPem, 0o644, true);
  return {
    name,
    privateKeyFile,
    publicKeyFile,
    fingerprint: fingerprintOf(createPublicKey(publicPem)),
  };
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw ioError(`checking ${file}`, err);
  }
}

/** Writes `text` to a temporary file with `mode`, then moves it to `file` (create-only unless `replace`). */
async function writeWhole(
  file: string,
  text: string,
  mode: number,
  replace: boolean,
): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await fs.writeFile(temp, text, { mode, flag: 'wx' });
    await fs.chmod(temp, mode);
    if (replace) await fs.rename(temp, file);
    else {
      // link fails when the name exists: create-only even against a concurrent keygen.
      await fs.link(temp, file);
      await fs.unlink(temp);
    }
  } catch (err) {
    await fs.unlink(temp).catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new PodminError('ALREADY_EXISTS', `writing ${file}: it already exists`, {
        hint: 'pass --force to replace it',
      });
    }
    throw ioError(`writing ${file}`, err);
  }
}

function ioError(doing: string, err: unknown): PodminError {
  return new PodminError('IO_ERROR', `${doing}: ${(err as Error).message}`, { cause: err });
}

/** The private key files (`*.key`) under a cluster's trust directory, sorted; none when absent. */
export async function localKeyFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw ioError(`reading ${dir}`, err);
  }
  return names
    .filter((n) => n.endsWith(PRIVATE_KEY_SUFFIX) && !n.startsWith('.'))
    .sort()
    .map((n) => path.join(dir, n));
}

/** The deployer name a key file names: its basename without `.key`. */
export function deployerNameOfKeyFile(file: string): string {
  const base = path.basename(file);
  return base.endsWith(PRIVATE_KEY_SUFFIX) ? base.slice(0, -PRIVATE_KEY_SUFFIX.length) : base;
}

/** Reads a private key file; NOT_FOUND naming `field` when it is not there. */
export async function readKeyFile(file: string, field: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new PodminError(
        'NOT_FOUND',
        `reading the signing key: ${field} ${file} does not exist`,
        {
          cause: err,
          hint: 'create one with `podmin trust keygen`',
        },
      );
    }
    throw ioError(`reading the signing key ${field} ${file}`, err);
  }
}

/**
 * The local private key under `dir` whose public key has `fingerprint`, with its deployer name;
 * undefined when none matches (unreadable or malformed files are skipped).
 */
export async function findLocalKeyByFingerprint(
  dir: string,
  fingerprint: string,
): Promise<{ file: string; privatePem: string } | undefined> {
  for (const file of await localKeyFiles(dir)) {
    try {
      const privatePem = await fs.readFile(file, 'utf8');
      if (publicKeyOfPrivate(privatePem, file).fingerprint === fingerprint)
        return { file, privatePem };
    } catch {
      // Not a key podmin can sign with: it cannot be the one looked for.
    }
  }
  return undefined;
}
