/** AWS user-data rendering: validation, dependency rows, comment stripping, deterministic gzip. */
export * from './render';
/** The embedded `userdata/aws.sh` template. */
export { AWS_USERDATA_TEMPLATE } from './generated/aws-template';
