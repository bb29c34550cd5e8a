import path from 'node:path';
import { checkS3BucketName } from '@podmin/util-names';
import type { ConnectRules } from './context.ports';

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The aws provider's connect rules: an AWS region (or AWS_REGION) and an S3 bucket name. */
export const awsConnectRules: ConnectRules = {
  resolveLocation(options, _dataDir, problems) {
    const region = options.region ?? options.defaultRegion;
    if (!region)
      problems.push({
        field: '--region',
        message: 'is required for --provider aws (or set AWS_REGION)',
      });
    else if (!REGION.test(region))
      problems.push({
        field: '--region',
        message: `${JSON.stringify(region)} is not an AWS region name such as us-east-1`,
      });
    if (options.secretsProvider === 'local')
      problems.push({ field: '--secrets-provider', message: 'local is only for --provider local' });
    const bucket = options.bucket ?? `podmin-${options.cluster}`;
    const bucketProblem = checkS3BucketName(bucket);
    if (bucketProblem !== undefined) {
      problems.push({
        field: '--bucket',
        message: `${JSON.stringify(bucket)} is not a valid S3 bucket name: it ${bucketProblem}`,
      });
    }
    return { region: region ?? '', bucket };
  },
  describeBucket: (location) => `s3://${location.bucket} (${location.region})`,
};

/** The local provider's connect rules: no region or profile, a directory as the bucket. */
export const localConnectRules: ConnectRules = {
  resolveLocation(options, dataDir, problems) {
    if (options.region !== undefined && options.region !== 'local')
      problems.push({ field: '--region', message: 'the local provider has no regions; omit it' });
    if (options.profile !== undefined)
      problems.push({ field: '--profile', message: 'applies only to --provider aws' });
    return {
      region: 'local',
      bucket: path.resolve(options.bucket ?? path.join(dataDir, 'buckets', options.cluster)),
    };
  },
  describeBucket: (location) => `directory ${location.bucket}`,
};
