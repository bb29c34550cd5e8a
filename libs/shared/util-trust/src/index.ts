/** The statement a deployer signs for one index write. */
export * from './statement';
/** Deployer keys: reading public keys, fingerprints, local keys and signers. */
export * from './keys';
/** The trust list stored at `/<cluster>/_system/deployers`. */
export * from './deployers';
/** A node's check of an index against the trust list. */
export * from './verify';
/** Signing an index write. */
export * from './sign-index';
