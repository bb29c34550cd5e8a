import { createPublicKey } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROVIDER_RULES } from '@podmin/data-access-secrets';
import type { SignatureAlgorithm } from '@podmin/util-desired-state';
import { PodminError, ValidationError } from '@podmin/util-errors';
import {
  MAX_DEPLOYERS,
  fingerprintOf,
  isKmsKeyArn,
  localSigner,
  parseDeployers,
  readPublicKey,
  serializeDeployers,
  type Deployer,
  type IndexSigner,
  type PublicKeyInfo,
} from '@podmin/util-trust';
import { readDeployerList, writeDeployerList } from './deployer-list';
import {
  assertDeployerName,
  deployerNameFromUser,
  findLocalKeyByFingerprint,
  generateKeyFiles,
  trustKeyDir,
  type KeygenResult,
} from './key-files';
import { signIndex } from './sign-index';
import { kmsSigner } from './signer';
import type { KmsKeys, TrustDeps } from './trust.ports';

/** The KMS key spec, usage and algorithm podmin signs with. */
const KMS_SPEC = 'ECC_NIST_P256';
const KMS_USAGE = 'SIGN_VERIFY';
const KMS_ALGORITHM = 'ECDSA_SHA_256';

/** `podmin trust keygen`'s request. */
export interface KeygenRequest {
  /** `--name`; default: the local user name made into a DNS label. */
  name?: string;
  force?: boolean;
  /** The local user name (os.userInfo), for the default name. */
  userName: string;
}

/**
 * `podmin trust keygen`: a local Ed25519 signing key for the current cluster at
 * `<config>/trust/<cluster>/<name>.key` (0600) and `.pub`, then the next step.
 */
export async function keygen(
  request: KeygenRequest,
  deps: Pick<TrustDeps, 'cluster' | 'configDir' | 'reporter'>,
): Promise<KeygenResult> {
  const name =
    request.name === undefined
      ? deployerNameFromUser(request.userName)
      : assertDeployerName(request.name, '--name');
  const result = await generateKeyFiles(
    trustKeyDir(deps.configDir, deps.cluster),
    name,
    request.force === true,
  );
  deps.reporter.info(
    `Created signing key ${name} for cluster ${deps.cluster} (ed25519, ${result.fingerprint}): private key ${result.privateKeyFile} (0600, never leaves this machine)`,
  );
  deps.reporter.info(
    `Next: a trusted deployer (or you, for the first one) runs \`podmin trust add ${name} --public-key ${result.publicKeyFile}\`; deploys from this machine then sign with it.`,
  );
  deps.reporter.result(result.publicKeyFile);
  return result;
}

/** `podmin trust add`'s request: a name and exactly one key. */
export interface AddDeployerRequest {
  name: string;
  /** `--public-key FILE`: PEM or DER SubjectPublicKeyInfo, Ed25519 or P-256. */
  publicKeyFile?: string;
  /** `--kms-key ARN`: an AWS KMS ECC_NIST_P256 SIGN_VERIFY key. */
  kmsKeyArn?: string;
  /** `--sign`: re-sign the current index as this deployer right away (the first one). */
  sign?: boolean;
}

/** What `podmin trust add` did. */
export interface AddDeployerResult {
  deployer: Deployer;
  fingerprint: string;
  /** True when this was the first trusted deployer: enforcement is now on. */
  enforcementTurnedOn: boolean;
  /** True when the current index was re-signed as the new deployer. */
  signed: boolean;
}

/** The public key of a `--public-key` file; errors name the flag and the file. */
async function publicKeyFromFile(file: string): Promise<PublicKeyInfo> {
  const field = `--public-key ${file}`;
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(path.resolve(file));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new PodminError(
      missing ? 'NOT_FOUND' : 'IO_ERROR',
      `reading a deployer key: ${field}: ${missing ? 'no such file' : (err as Error).message}`,
      { cause: err },
    );
  }
  return readPublicKey(bytes, field);
}

/**
 * The public key of a KMS key that can sign indexes: DescribeKey must show an enabled
 * ECC_NIST_P256 SIGN_VERIFY key with ECDSA_SHA_256, else an error naming what the key is and
 * what is allowed; then GetPublicKey.
 */
async function publicKeyFromKms(arn: string, kms: KmsKeys): Promise<PublicKeyInfo> {
  const field = `--kms-key ${arn}`;
  if (!isKmsKeyArn(arn)) {
    throw new ValidationError(
      'reading a deployer key',
      [
        {
          field: '--kms-key',
          message: `${JSON.stringify(arn)} is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>; an alias is not accepted, the trust list names the key itself)`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
  const facts = await kms.describe(arn);
  const fits =
    facts.keySpec === KMS_SPEC &&
    facts.keyUsage === KMS_USAGE &&
    facts.signingAlgorithms.includes(KMS_ALGORITHM);
  if (!fits) {
    const algorithms =
      facts.signingAlgorithms.length === 0
        ? 'no signing algorithm'
        : facts.signingAlgorithms.join(', ');
    throw new ValidationError(
      'reading a deployer key',
      [
        {
          field,
          message: `is a ${facts.keySpec ?? 'key of unknown spec'} key for ${facts.keyUsage ?? 'an unknown usage'} (${algorithms}); podmin signs with an asymmetric key of spec ${KMS_SPEC}, usage ${KMS_USAGE}, algorithm ${KMS_ALGORITHM}`,
        },
      ],
      {
        code: 'INVALID_ARGUMENT',
        hint: `create one with \`aws kms create-key --key-spec ${KMS_SPEC} --key-usage ${KMS_USAGE}\``,
      },
    );
  }
  if (!facts.enabled) {
    throw new PodminError(
      'PRECONDITION_FAILED',
      `reading a deployer key: ${field}: the key is disabled or pending deletion, so it cannot sign`,
      { fault: 'user', hint: 'enable the key in AWS KMS first' },
    );
  }
  const info = readPublicKey(await kms.publicKey(arn), field);
  if (info.algorithm !== 'ecdsa-p256-sha256') {
    throw new ValidationError('reading a deployer key', [
      { field, message: `its public key is ${info.algorithm}, not an ECDSA P-256 key` },
    ]);
  }
  return info;
}

/** The signer that can sign as a just-added deployer, when this machine has its key. */
async function signerOf(
  deployer: Deployer,
  fingerprint: string,
  deps: TrustDeps,
): Promise<IndexSigner | undefined> {
  if (deployer.kmsKeyArn !== undefined)
    return kmsSigner(deployer.name, deployer.kmsKeyArn, await deps.kms());
  const local = await findLocalKeyByFingerprint(
    trustKeyDir(deps.configDir, deps.cluster),
    fingerprint,
  );
  return local === undefined ? undefined : localSigner(deployer.name, local.privatePem, local.file);
}

/**
 * `podmin trust add`: checks the key, reads the trust list (one Parameter Store read; none is
 * an empty list), refuses a taken name, a key already trusted under another name or a full
 * list, and writes the list. The first deployer turns enforcement on; then the current index is
 * re-signed as it when asked (`sign`, or yes on the terminal), else the output says how.
 */
export async function addDeployer(
  request: AddDeployerRequest,
  deps: TrustDeps,
): Promise<AddDeployerResult> {
  const name = assertDeployerName(request.name, '<name>');
  const given = [request.publicKeyFile, request.kmsKeyArn].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `adding deployer ${name}: give exactly one of --public-key FILE and --kms-key ARN`,
      {
        hint: 'create a local key with `podmin trust keygen`, or use an AWS KMS ECC_NIST_P256 key',
      },
    );
  }
  const info =
    request.kmsKeyArn !== undefined
      ? await publicKeyFromKms(request.kmsKeyArn, await deps.kms())
      : await publicKeyFromFile(request.publicKeyFile as string);
  const list = await readDeployerList(deps);
  const doing = `adding deployer ${name} to cluster ${deps.cluster}`;
  const trusted = list.doc.deployers;
  if (trusted.some((d) => d.name === name)) {
    throw new PodminError('ALREADY_EXISTS', `${doing}: ${name} is already a trusted deployer`, {
      hint: `to change its key, run \`podmin trust remove ${name}\` first`,
    });
  }
  const same = trusted.find(
    (d) => fingerprintOf(createPublicKey(d.publicKey)) === info.fingerprint,
  );
  if (same !== undefined) {
    throw new PodminError(
      'ALREADY_EXISTS',
      `${doing}: this key (${info.fingerprint}) is already trusted as ${same.name}`,
      { hint: 'one key is one deployer; sign as that name with --signer' },
    );
  }
  if (trusted.length >= MAX_DEPLOYERS) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: the trust list holds at most ${MAX_DEPLOYERS} deployers`,
      { hint: 'remove one with `podmin trust remove <name>`, or share a KMS key between CI jobs' },
    );
  }
  const deployer: Deployer = {
    name,
    algorithm: info.algorithm,
    publicKey: info.pem,
    ...(request.kmsKeyArn === undefined ? {} : { kmsKeyArn: request.kmsKeyArn }),
    added: (deps.now?.() ?? new Date()).toISOString(),
  };
  // The list as nodes will read it: checked by their parser before it is written.
  const doc = parseDeployers(
    serializeDeployers({ version: 1, deployers: [...trusted, deployer] }),
    list.name,
  );
  const size = Buffer.byteLength(serializeDeployers(doc));
  const limit = PROVIDER_RULES['aws-parameter-store'].maxValueBytes;
  if (size > limit) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: the trust list would be ${size} bytes, over the ${limit / 1024} KiB a Parameter Store parameter holds (${trusted.length} deployers are trusted; KMS keys take the most room); nothing was written`,
      {
        hint: 'remove a deployer with `podmin trust remove <name>`, or share one KMS key between CI jobs',
      },
    );
  }
  const first = trusted.length === 0;
  // With --sign the signer is found before anything is written, so a missing key writes nothing.
  const signer =
    first || request.sign ? await signerOf(deployer, info.fingerprint, deps) : undefined;
  if (request.sign && signer === undefined) {
    throw new PodminError(
      'NOT_FOUND',
      `${doing}: --sign needs ${name}'s private key on this machine, and no key under ${trustKeyDir(deps.configDir, deps.cluster)} matches ${info.fingerprint}; nothing was written`,
      {
        hint: `add it without --sign, then run \`podmin trust sign --signing-key <its .key file> --signer ${name}\``,
      },
    );
  }
  await writeDeployerList(await deps.openStore(), list, doc);
  deps.reporter.info(
    `Trusted deployer ${name} in cluster ${deps.cluster} (${info.algorithm}, ${info.fingerprint}${request.kmsKeyArn === undefined ? '' : `, ${request.kmsKeyArn}`})`,
  );
  let signed = false;
  if (first) {
    deps.reporter.warn(
      `Enforcement is now on for cluster ${deps.cluster}: nodes run only an index signed by a trusted deployer, and refuse the current one until a trusted deployer deploys again or re-signs it with \`podmin trust sign\`.`,
    );
    const sign =
      request.sign === true ||
      (signer !== undefined &&
        deps.interactive &&
        (await deps.reporter.confirm(`Re-sign the current index now as ${name}?`)));
    if (sign && signer !== undefined) {
      await signIndex({ signer, cluster: deps.cluster }, deps, { yes: true });
      signed = true;
    } else {
      const how =
        deployer.kmsKeyArn !== undefined
          ? `\`podmin trust sign --kms-key ${deployer.kmsKeyArn} --signer ${name}\``
          : signer === undefined
            ? `\`podmin trust sign --signing-key <its .key file> --signer ${name}\` on the machine holding ${name}'s key`
            : `\`podmin trust sign --signer ${name}\``;
      deps.reporter.info(`Re-sign it now with ${how} (or pass --sign to trust add).`);
    }
  } else if (request.sign && signer !== undefined) {
    await signIndex({ signer, cluster: deps.cluster }, deps, { yes: true });
    signed = true;
  }
  deps.reporter.result(name);
  return { deployer, fingerprint: info.fingerprint, enforcementTurnedOn: first, signed };
}

/** One row of `podmin trust list`. */
export interface DeployerRow {
  name: string;
  algorithm: SignatureAlgorithm;
  fingerprint: string;
  kmsKeyArn: string | null;
  added: string;
}

/** `podmin trust list`: whether enforcement is on, and each trusted deployer. */
export async function listDeployers(
  deps: Pick<TrustDeps, 'cluster' | 'openStore'>,
): Promise<{ enforcement: boolean; deployers: DeployerRow[] }> {
  const list = await readDeployerList(deps);
  return {
    enforcement: list.exists && list.doc.deployers.length > 0,
    deployers: list.doc.deployers.map((d) => ({
      name: d.name,
      algorithm: d.algorithm,
      fingerprint: fingerprintOf(createPublicKey(d.publicKey)),
      kmsKeyArn: d.kmsKeyArn ?? null,
      added: d.added,
    })),
  };
}

/** `podmin trust remove`'s request. */
export interface RemoveDeployerRequest {
  name: string;
  /** `--yes`: remove the last deployer (enforcement off) without asking. */
  yes?: boolean;
}

/**
 * `podmin trust remove`: an unknown name is NOT_FOUND naming the trusted ones (nothing
 * written). Removing the last deployer turns enforcement off: it asks first (on a terminal;
 * otherwise `yes` is required) and then deletes the parameter.
 */
export async function removeDeployer(
  request: RemoveDeployerRequest,
  deps: TrustDeps,
): Promise<{ enforcement: boolean }> {
  const list = await readDeployerList(deps);
  const doing = `removing deployer ${request.name} from cluster ${deps.cluster}`;
  const trusted = list.doc.deployers;
  if (!trusted.some((d) => d.name === request.name)) {
    throw new PodminError(
      'NOT_FOUND',
      `${doing}: no such trusted deployer (trusted: ${trusted.length === 0 ? 'none' : trusted.map((d) => d.name).join(', ')}); nothing was written`,
      { hint: 'run `podmin trust list` to see the trusted deployers' },
    );
  }
  const rest = trusted.filter((d) => d.name !== request.name);
  const store = await deps.openStore();
  if (rest.length > 0) {
    await writeDeployerList(store, list, { version: 1, deployers: rest });
    deps.reporter.info(
      `Removed deployer ${request.name} from cluster ${deps.cluster}: nodes refuse an index it signs from their next poll (an index it signed last stays refused until another trusted deployer writes one).`,
    );
    return { enforcement: true };
  }
  if (request.yes !== true) {
    if (!deps.interactive) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `${doing}: it is the last trusted deployer, and removing it turns enforcement off (nodes then apply any index, signed or not); confirmation required, nothing was written`,
        { hint: 'pass --yes to remove it without a prompt' },
      );
    }
    const confirmed = await deps.reporter.confirm(
      `${request.name} is the last trusted deployer of cluster ${deps.cluster}: removing it turns enforcement off, and nodes then apply any index a bucket writer puts there. Remove it?`,
    );
    if (!confirmed) {
      throw new PodminError('INVALID_ARGUMENT', `${doing}: not confirmed; nothing was written`);
    }
  }
  await store.destroy(list.name);
  deps.reporter.warn(
    `Removed deployer ${request.name}, the last one: enforcement is off for cluster ${deps.cluster}; nodes apply any index again, signed or not.`,
  );
  return { enforcement: false };
}
