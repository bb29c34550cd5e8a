/** The S3 bucket-name rule, defined once for every CLI and agent check. */
export {
  EXACT_OBJECT_KEY_MAX,
  EXACT_OBJECT_KEY_RULE,
  checkS3BucketName,
  isExactObjectKey,
  isS3BucketName,
  parseExactS3Object,
  parseS3ObjectUrl,
} from './s3-bucket-name';
/** The DNS-1123 label and subdomain rules, defined once. */
export {
  DNS_LABEL_MAX_LENGTH,
  DNS_SUBDOMAIN_MAX_LENGTH,
  isDnsLabel,
  isDnsSubdomain,
} from './dns-label';
export { formatIpv6, inIpv6Prefix, parseIpv6 } from './ipv6';
/** Provider implementations by name, shared by the CLI's and the agent's one provider choice. */
export { ProviderRegistry } from './provider-registry';
