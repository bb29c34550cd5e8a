/** Ports of the trust operations: the trust list's store, KMS, the shell. */
export * from './trust.ports';
/** The `podmin trust keygen|add|list|remove|sign` operations. */
export {
  keygen,
  addDeployer,
  listDeployers,
  removeDeployer,
  type KeygenRequest,
  type AddDeployerRequest,
  type AddDeployerResult,
  type DeployerRow,
  type RemoveDeployerRequest,
} from './trust-commands';
/** `podmin trust sign`: re-sign the index, showing and confirming one nodes refuse now. */
export { signIndex, type SignIndexRequest } from './sign-index';
/** Choosing the signer of an index write, and refusing unsigned writes under enforcement. */
export {
  resolveSigner,
  resolveIndexSigning,
  assertUnsignedAllowed,
  kmsSigner,
  type SignerSettings,
  type SignerChoice,
  type SignerDeps,
} from './signer';
/** The trust list in Parameter Store. */
export {
  readDeployerList,
  writeDeployerList,
  deployersSecretName,
  type DeployerList,
} from './deployer-list';
/** Local signing key files under `<config>/trust/<cluster>/`. */
export {
  trustKeyDir,
  deployerNameFromUser,
  generateKeyFiles,
  localKeyFiles,
  type KeygenResult,
} from './key-files';
/** The AWS KMS adapter. */
export {
  AwsKmsKeys,
  createKmsClient,
  kmsClientsFor,
  regionOfKmsArn,
  translateKmsError,
} from './adapters/aws-kms-keys';
