import path from 'node:path';
import type { IndexSigning } from '@podmin/data-access-desired-state';
import { PodminError, ValidationError } from '@podmin/util-errors';
import { isKmsKeyArn, localSigner, type IndexSigner } from '@podmin/util-trust';
import { readDeployerList } from './deployer-list';
import {
  assertDeployerName,
  deployerNameOfKeyFile,
  localKeyFiles,
  readKeyFile,
  trustKeyDir,
  PRIVATE_KEY_SUFFIX,
} from './key-files';
import type { KmsKeys, TrustListDeps } from './trust.ports';

/** One source of signer settings: the command's flags, or the environment. */
export interface SignerSettings {
  /** `--signing-key FILE` / PODMIN_SIGNING_KEY: a local private key. */
  signingKey?: string;
  /** `--kms-key ARN` / PODMIN_KMS_KEY: an AWS KMS ECC_NIST_P256 signing key. */
  kmsKey?: string;
  /** `--signer NAME` / PODMIN_SIGNER: the trusted deployer name the signature carries. */
  signer?: string;
}

/** The signer settings of one invocation: flags win over the environment. */
export interface SignerChoice {
  flags: SignerSettings;
  env: SignerSettings;
}

/** What resolving a signer needs: the trust list (for unsigned writes), keys, and KMS. */
export interface SignerDeps extends TrustListDeps {
  /** Podmin's config directory; the default key is the one `*.key` in `<config>/trust/<cluster>/`. */
  configDir: string;
  /** The KMS client, built only for a KMS key. */
  kms(): Promise<KmsKeys>;
}

/**
 * An {@link IndexSigner} over an AWS KMS key: one `Sign` call per signed write (RAW message,
 * ECDSA_SHA_256), so no private key is ever on the deployer's machine.
 */
export function kmsSigner(signer: string, arn: string, kms: KmsKeys): IndexSigner {
  return {
    signer,
    algorithm: 'ecdsa-p256-sha256',
    sign: (statement) => kms.sign(arn, statement),
  };
}

const FIELDS = {
  flags: { signingKey: '--signing-key', kmsKey: '--kms-key', signer: '--signer' },
  env: { signingKey: 'PODMIN_SIGNING_KEY', kmsKey: 'PODMIN_KMS_KEY', signer: 'PODMIN_SIGNER' },
} as const;

/**
 * The signer an invocation configured, or undefined when none: `--signing-key` or `--kms-key`
 * (else PODMIN_SIGNING_KEY or PODMIN_KMS_KEY), named by `--signer` (else PODMIN_SIGNER; a key
 * file's name without `.key` otherwise); else `--signer NAME` alone picks
 * `<config>/trust/<cluster>/NAME.key`; else the one `*.key` there. Reads local files only.
 */
export async function resolveSigner(
  choice: SignerChoice,
  deps: Pick<SignerDeps, 'cluster' | 'configDir' | 'kms'>,
): Promise<IndexSigner | undefined> {
  const { flags, env } = choice;
  for (const [source, settings] of [
    ['flags', flags],
    ['env', env],
  ] as const) {
    if (settings.signingKey !== undefined && settings.kmsKey !== undefined) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `choosing the signing key: ${FIELDS[source].signingKey} and ${FIELDS[source].kmsKey} are both set; give one`,
      );
    }
  }
  const fromFlags = flags.signingKey !== undefined || flags.kmsKey !== undefined;
  const keys = fromFlags ? flags : env;
  const keyFields = fromFlags ? FIELDS.flags : FIELDS.env;
  const signerField = flags.signer !== undefined ? FIELDS.flags.signer : FIELDS.env.signer;
  const name = flags.signer ?? env.signer;
  if (name !== undefined) assertDeployerName(name, signerField);

  if (keys.kmsKey !== undefined) {
    const arn = keys.kmsKey;
    if (!isKmsKeyArn(arn)) {
      throw new ValidationError(
        'choosing the signing key',
        [
          {
            field: keyFields.kmsKey,
            message: `${JSON.stringify(arn)} is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)`,
          },
        ],
        { code: 'INVALID_ARGUMENT' },
      );
    }
    if (name === undefined) {
      throw new PodminError(
        'INVALID_ARGUMENT',
        `choosing the signing key: ${keyFields.kmsKey} needs --signer NAME (or PODMIN_SIGNER), the name \`podmin trust add\` gave the key`,
        { hint: 'run `podmin trust list` to see the trusted names and their KMS keys' },
      );
    }
    return kmsSigner(name, arn, await deps.kms());
  }

  if (keys.signingKey !== undefined) {
    const file = path.resolve(keys.signingKey);
    const field = `${keyFields.signingKey} ${keys.signingKey}`;
    const signer =
      name ??
      assertDeployerName(
        deployerNameOfKeyFile(file),
        `${field} (its name without ${PRIVATE_KEY_SUFFIX}; or give --signer NAME)`,
      );
    return localSigner(signer, await readKeyFile(file, keyFields.signingKey), field);
  }

  const dir = trustKeyDir(deps.configDir, deps.cluster);
  if (name !== undefined) {
    const file = path.join(dir, `${name}${PRIVATE_KEY_SUFFIX}`);
    return localSigner(name, await readKeyFile(file, signerField), file);
  }
  const found = await localKeyFiles(dir);
  if (found.length === 0) return undefined;
  if (found.length > 1) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `choosing the signing key: ${dir} holds ${found.length} keys (${found.map(deployerNameOfKeyFile).join(', ')}); say which one signs`,
      { hint: 'pass --signing-key FILE or --signer NAME (or set PODMIN_SIGNING_KEY)' },
    );
  }
  const file = found[0] as string;
  const signer = assertDeployerName(deployerNameOfKeyFile(file), file);
  return localSigner(signer, await readKeyFile(file, 'the default key'), file);
}

/**
 * The signing of an index write (`signing` of the desired-state update functions), or
 * undefined for an unsigned write. Without a configured signer the trust list is read once and
 * an unsigned write is refused, before anything is written, while the cluster has trusted
 * deployers. `doing` leads the refusal (e.g. `deploying default/web`).
 */
export async function resolveIndexSigning(
  choice: SignerChoice,
  deps: SignerDeps,
  doing: string,
): Promise<IndexSigning | undefined> {
  const signer = await resolveSigner(choice, deps);
  if (signer !== undefined) return { signer, cluster: deps.cluster };
  await assertUnsignedAllowed(deps, doing);
  return undefined;
}

/** Refuses an unsigned index write while the cluster has trusted deployers (one list read). */
export async function assertUnsignedAllowed(deps: TrustListDeps, doing: string): Promise<void> {
  let list: Awaited<ReturnType<typeof readDeployerList>>;
  try {
    list = await readDeployerList(deps);
  } catch (err) {
    // Unknown is not off: an unreadable or malformed list refuses the unsigned write.
    const why = err instanceof Error ? err.message : String(err);
    throw new PodminError(
      err instanceof PodminError ? err.code : 'IO_ERROR',
      `${doing}: cannot tell whether cluster ${deps.cluster} accepts unsigned desired state (${why}); nothing was written`,
      {
        cause: err,
        hint: 'sign the write (--signing-key FILE or --kms-key ARN --signer NAME), which needs no trust-list read, or fix access to the secret store',
      },
    );
  }
  if (!list.exists || list.doc.deployers.length === 0) return;
  const names = list.doc.deployers.map((d) => d.name).join(', ');
  throw new PodminError(
    'PRECONDITION_FAILED',
    `${doing}: cluster ${deps.cluster} runs only desired state signed by a trusted deployer (${names}), and no signing key is configured; nothing was written`,
    {
      fault: 'user',
      hint: 'sign with --signing-key FILE (a `podmin trust keygen` key) or --kms-key ARN --signer NAME (or PODMIN_SIGNING_KEY / PODMIN_KMS_KEY); a new deployer runs `podmin trust keygen` and has a trusted one run `podmin trust add`',
    },
  );
}
