/** Ports of the infrastructure flows. */
export * from './infra.ports';
/** `podmin setup` on AWS and its pre-checks. */
export {
  setupAwsCluster,
  checkProvider,
  buildModuleVars,
  type ProviderPlan,
  type ResolvedNodeGroup,
} from './setup';
/** `podmin teardown` and `podmin destroy` on AWS. */
export { teardownAwsCluster, destroyAwsCluster } from './teardown';
