export { MAX_YAML_DEPTH, parseYamlStream, stringifyCanonical, yamlSizeBound } from './yaml';
export { parseImageFlags, parsePortFlags, parseQuantity, checkImageOverrides } from './flags';
export type { ImageOverrides, PortMapping } from './flags';
export { CLUSTER_REGISTRY, checkClusterImage, resolveClusterImage } from './image-reference';
export type { ImageCheck } from './image-reference';
export {
  APP_NAME_LABEL,
  DEFAULT_SERVICE_PORT,
  DEFAULT_TARGET_PORT,
  assertInitImages,
  assertNoBuiltInOnlyFlags,
  builtInUpdateStrategy,
  renderBuiltInManifest,
} from './built-in-manifest';
export type { BuiltInOnlyFlags, BuiltInOptions } from './built-in-manifest';
export { buildDeployment } from './deployment';
export { parsePodPayload, parseServicePayload } from './payload';
export type { PodPayload, ServicePayload } from './payload';
export type { BuildOptions, Deployment, DeploymentService } from './deployment';
export { recognizedOrigin } from './origin';
export { DNS1123_LABEL_RULE, isDns1123Label } from './names';
export {
  MAX_PAYLOAD_BYTES,
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  IMAGE_TAGS_ANNOTATION,
  NODEGROUP_SELECTOR_KEY,
  ORIGIN_ANNOTATION,
  RECOGNIZED_ORIGINS,
  SERVICE_ANNOTATION,
  WORKLOAD_IDENTITY_MOUNT_PATH,
  WORKLOAD_IDENTITY_VOLUME,
  workloadIdentityHostPath,
} from './constants';
export { SERVER_POPULATED_FIELDS, isEmptyServerValue } from './server-fields';
export { STATIC_POD_REFUSALS, checkStaticPodFields } from './static-pod-fields';
export {
  CLUSTER_DOMAIN,
  HONOURED_DNS_POLICIES,
  MAX_DNS_SEARCHES,
  MAX_DNS_SEARCH_CHARS,
  clusterSearches,
  nodePodDns,
} from './pod-dns';
export type { NodePodDns, PodDnsOption } from './pod-dns';
export type { StaticPodRefusal } from './static-pod-fields';
export {
  displayImages,
  isPinnedReference,
  pinPodImages,
  podImageUses,
  readImageTags,
  serializeImageTags,
} from './image-pin';
export type { PodImageUse } from './image-pin';
