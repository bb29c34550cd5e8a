import {
  CreateBucketCommand,
  GetBucketLocationCommand,
  HeadBucketCommand,
  PutPublicAccessBlockCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3BucketProvisioner, regionOfLocationConstraint } from './s3-bucket-provisioner';

/** A stand-in S3 client that answers each command type from a handler; only in this adapter's spec. */
function fakeClient(handlers: Record<string, (input: unknown) => unknown>): {
  client: S3Client;
  sent: string[];
  inputs: unknown[];
} {
  const sent: string[] = [];
  const inputs: unknown[] = [];
  const send = jest.fn((command: { constructor: { name: string }; input: unknown }) => {
    const name = command.constructor.name;
    sent.push(name);
    inputs.push(command.input);
    const handler = handlers[name];
    return handler === undefined
      ? Promise.resolve({})
      : Promise.resolve().then(() => handler(command.input));
  });
  return { client: { send } as unknown as S3Client, sent, inputs };
}

function s3Error(
  name: string,
  status: number,
  headers: Record<string, string> = {},
): S3ServiceException {
  const err = new S3ServiceException({
    name,
    $fault: 'client',
    $metadata: { httpStatusCode: status },
  });
  return Object.assign(err, { $response: { statusCode: status, headers } });
}

const notFound = (): never => {
  throw s3Error('NotFound', 404);
};

describe('S3BucketProvisioner (fake client)', () => {
  it('creates a missing bucket with the region as location constraint, then blocks public access', async () => {
    const { client, sent, inputs } = fakeClient({
      [HeadBucketCommand.name]: notFound,
      [GetBucketLocationCommand.name]: () => ({ LocationConstraint: 'eu-central-1' }),
    });
    const provisioner = new S3BucketProvisioner({ client, bucket: 'b', region: 'eu-central-1' });
    await expect(provisioner.ensureBucket()).resolves.toEqual({ created: true });
    expect(sent).toEqual([
      HeadBucketCommand.name,
      CreateBucketCommand.name,
      GetBucketLocationCommand.name,
      PutPublicAccessBlockCommand.name,
    ]);
    expect(inputs[1]).toEqual({
      Bucket: 'b',
      CreateBucketConfiguration: { LocationConstraint: 'eu-central-1' },
    });
    expect(inputs[3]).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        IgnorePublicAcls: true,
        BlockPublicPolicy: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('sends no location constraint for us-east-1', async () => {
    const { client, inputs } = fakeClient({ [HeadBucketCommand.name]: notFound });
    await new S3BucketProvisioner({ client, bucket: 'b', region: 'us-east-1' }).ensureBucket();
    expect(inputs[1]).toEqual({ Bucket: 'b', CreateBucketConfiguration: undefined });
  });

  it('reports a bucket owned by another account', async () => {
    const { client } = fakeClient({
      [HeadBucketCommand.name]: notFound,
      [CreateBucketCommand.name]: () => {
        throw s3Error('BucketAlreadyExists', 409);
      },
    });
    await expect(
      new S3BucketProvisioner({ client, bucket: 'b', region: 'us-east-1' }).ensureBucket(),
    ).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
  });

  it('treats a concurrent creation by us as not created', async () => {
    const { client } = fakeClient({
      [HeadBucketCommand.name]: notFound,
      [CreateBucketCommand.name]: () => {
        throw s3Error('BucketAlreadyOwnedByYou', 409);
      },
    });
    await expect(
      new S3BucketProvisioner({ client, bucket: 'b', region: 'us-east-1' }).ensureBucket(),
    ).resolves.toEqual({
      created: false,
    });
  });

  it('reports 403 on HeadBucket as ACCESS_DENIED', async () => {
    const { client } = fakeClient({
      [HeadBucketCommand.name]: () => {
        throw s3Error('Forbidden', 403);
      },
    });
    await expect(
      new S3BucketProvisioner({ client, bucket: 'b', region: 'us-east-1' }).ensureBucket(),
    ).rejects.toMatchObject({
      code: 'ACCESS_DENIED',
    });
  });

  it('names both regions when S3 redirects to the bucket region', async () => {
    const { client } = fakeClient({
      [HeadBucketCommand.name]: () => {
        throw s3Error('PermanentRedirect', 301, { 'x-amz-bucket-region': 'ap-south-1' });
      },
    });
    const err: unknown = await new S3BucketProvisioner({ client, bucket: 'b', region: 'us-east-1' })
      .ensureBucket()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((err as Error).message).toContain('it is in ap-south-1, not us-east-1');
  });
});

describe('regionOfLocationConstraint', () => {
  it('reads the empty constraint as us-east-1 and EU as eu-west-1', () => {
    expect(regionOfLocationConstraint(undefined)).toBe('us-east-1');
    expect(regionOfLocationConstraint(null)).toBe('us-east-1');
    expect(regionOfLocationConstraint('')).toBe('us-east-1');
    expect(regionOfLocationConstraint('EU')).toBe('eu-west-1');
    expect(regionOfLocationConstraint('eu-north-1')).toBe('eu-north-1');
  });
});
