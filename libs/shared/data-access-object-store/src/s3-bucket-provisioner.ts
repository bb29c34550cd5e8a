import {
  CreateBucketCommand,
  DeleteBucketCommand,
  GetBucketLocationCommand,
  HeadBucketCommand,
  PutPublicAccessBlockCommand,
} from '@aws-sdk/client-s3';
import type { BucketLocationConstraint, S3Client } from '@aws-sdk/client-s3';
import { PodminError } from '@podmin/util-errors';
import type { BucketProvisioner } from './bucket-provisioner.port';
import { probeStoreAccess, randomProbeId } from './probe-access';
import type { ProbeIdSource } from './probe-access';
import { sdkErrorDetails, translateS3Error } from './s3-errors';
import { S3ObjectStore } from './s3-object-store';

/** The bucket an S3 provisioner manages and the region it must be in. */
export interface S3BucketProvisionerOptions {
  client: S3Client;
  bucket: string;
  region: string;
  /** Random part of probe keys (default: 16 random hex characters). */
  probeId?: ProbeIdSource;
}

/** Creates, secures and checks an S3 cluster bucket. */
export class S3BucketProvisioner implements BucketProvisioner {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly region: string;
  private readonly probeId: ProbeIdSource;

  constructor(options: S3BucketProvisionerOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.region = options.region;
    this.probeId = options.probeId ?? randomProbeId;
  }

  async ensureBucket(): Promise<{ created: boolean }> {
    const created = (await this.bucketExists()) ? false : await this.createBucket();
    await this.verifyRegion();
    await this.blockPublicAccess();
    return { created };
  }

  async probeAccess(): Promise<void> {
    const store = new S3ObjectStore({ client: this.client, bucket: this.bucket });
    await probeStoreAccess(store, `s3://${this.bucket}`, this.probeId);
  }

  async deleteBucket(): Promise<void> {
    try {
      await this.client.send(new DeleteBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const translated = translateS3Error(err, `deleting bucket s3://${this.bucket}`);
      if (translated.code === 'BUCKET_UNAVAILABLE' && sdkErrorDetails(err).name === 'NoSuchBucket')
        return;
      throw translated;
    }
  }

  private async bucketExists(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch (err) {
      const { name, status } = sdkErrorDetails(err);
      if (name === 'NotFound' || name === 'NoSuchBucket' || status === 404) {
        return false;
      }
      if (status === 301) {
        // Exists in another region: S3 names it in a header; otherwise verifyRegion finds it.
        const actual = redirectRegion(err);
        if (actual !== undefined && actual !== this.region) {
          throw this.regionMismatch(actual, err);
        }
        return true;
      }
      if (status === 403) {
        throw new PodminError(
          'ACCESS_DENIED',
          `checking bucket s3://${this.bucket}: access denied (the bucket may belong to another AWS account)`,
          {
            cause: err,
            hint: 'bucket names are global: choose another --bucket, or allow s3:ListBucket',
          },
        );
      }
      throw translateS3Error(err, `checking bucket s3://${this.bucket}`);
    }
  }

  private async createBucket(): Promise<boolean> {
    // us-east-1 is the one region that rejects an explicit LocationConstraint.
    const configuration =
      this.region === 'us-east-1'
        ? undefined
        : { LocationConstraint: this.region as BucketLocationConstraint };
    try {
      await this.client.send(
        new CreateBucketCommand({ Bucket: this.bucket, CreateBucketConfiguration: configuration }),
      );
      return true;
    } catch (err) {
      const { name } = sdkErrorDetails(err);
      if (name === 'BucketAlreadyOwnedByYou') {
        return false; // created concurrently by us
      }
      if (name === 'BucketAlreadyExists') {
        throw new PodminError(
          'ALREADY_EXISTS',
          `creating bucket s3://${this.bucket}: the name is taken by another account`,
          {
            cause: err,
            hint: 'bucket names are global: choose another --bucket',
          },
        );
      }
      throw translateS3Error(err, `creating bucket s3://${this.bucket} in ${this.region}`);
    }
  }

  private async verifyRegion(): Promise<void> {
    const doing = `verifying the region of bucket s3://${this.bucket}`;
    let constraint: string | undefined;
    try {
      const response = await this.client.send(
        new GetBucketLocationCommand({ Bucket: this.bucket }),
      );
      constraint = response.LocationConstraint;
    } catch (err) {
      const redirectedTo = redirectRegion(err);
      if (redirectedTo !== undefined && redirectedTo !== this.region) {
        throw this.regionMismatch(redirectedTo, err);
      }
      throw translateS3Error(err, doing);
    }
    const actual = regionOfLocationConstraint(constraint);
    if (actual !== this.region) {
      throw this.regionMismatch(actual);
    }
  }

  private regionMismatch(actual: string, cause?: unknown): PodminError {
    return new PodminError(
      'INVALID_ARGUMENT',
      `verifying the region of bucket s3://${this.bucket}: it is in ${actual}, not ${this.region}`,
      { cause, hint: `use --region ${actual}, or choose another --bucket` },
    );
  }

  private async blockPublicAccess(): Promise<void> {
    try {
      await this.client.send(
        new PutPublicAccessBlockCommand({
          Bucket: this.bucket,
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true,
            IgnorePublicAcls: true,
            BlockPublicPolicy: true,
            RestrictPublicBuckets: true,
          },
        }),
      );
    } catch (err) {
      throw translateS3Error(err, `blocking public access to bucket s3://${this.bucket}`);
    }
  }
}

/** The region S3 names in the `x-amz-bucket-region` header of a 301 redirect, if any. */
function redirectRegion(err: unknown): string | undefined {
  if (sdkErrorDetails(err).status !== 301) {
    return undefined;
  }
  const headers = (err as { $response?: { headers?: Record<string, string | undefined> } })
    .$response?.headers;
  const region = headers?.['x-amz-bucket-region'];
  return region === undefined || region === '' ? undefined : region;
}

/** GetBucketLocation answers null/empty for us-east-1 and the legacy `EU` for eu-west-1. */
export function regionOfLocationConstraint(constraint: string | null | undefined): string {
  if (constraint === undefined || constraint === null || constraint === '') {
    return 'us-east-1';
  }
  return constraint === 'EU' ? 'eu-west-1' : constraint;
}
