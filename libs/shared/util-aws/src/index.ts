/** Reading AWS SDK v3 errors without a service's exception classes. */
export {
  NETWORK_ERROR_CODES,
  awsErrorDetails,
  describeAwsError,
  type AwsErrorDetails,
} from './error-details';
/** One client configuration for every AWS service podmin talks to. */
export { awsClientConfig, type AwsClientOptions, type AwsRequestTimeouts } from './client-config';
/** The fallback error translation of the AWS JSON services' adapters. */
export {
  ACCESS_DENIED_NAMES,
  translateCommonAwsError,
  type CommonAwsErrorHints,
} from './common-errors';
