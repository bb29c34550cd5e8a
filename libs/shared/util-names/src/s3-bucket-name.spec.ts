import {
  isExactObjectKey,
  checkS3BucketName,
  isS3BucketName,
  parseExactS3Object,
  parseS3ObjectUrl,
} from './s3-bucket-name';

describe('checkS3BucketName', () => {
  it('accepts names AWS accepts', () => {
    for (const name of [
      'abc',
      'podmin-demo',
      'my.bucket.name',
      '0bucket9',
      'a'.repeat(63),
      'xn-one-dash',
      'bucket-s3alias-not-at-end',
      '1.2.3.4.5',
    ]) {
      expect([name, checkS3BucketName(name)]).toEqual([name, undefined]);
    }
  });

  it('names the broken rule for each invalid name', () => {
    const cases: Array<[string, RegExp]> = [
      ['ab', /3–63 characters/],
      ['a'.repeat(64), /3–63 characters/],
      ['Podmin', /only lowercase/],
      ['pod_min', /only lowercase/],
      ['pöd', /only lowercase/],
      ['-podmin', /begin and end/],
      ['podmin.', /begin and end/],
      ['pod..min', /adjacent dots/],
      ['192.168.5.4', /IPv4/],
      ['xn--bucket', /prefix "xn--"/],
      ['sthree-bucket', /prefix "sthree-"/],
      ['amzn-s3-demo-bucket', /prefix "amzn-s3-demo-"/],
      ['bucket-s3alias', /suffix "-s3alias"/],
      ['bucket--ol-s3', /suffix "--ol-s3"/],
      ['bucket.mrap', /suffix ".mrap"/],
      ['bucket--x-s3', /suffix "--x-s3"/],
      ['bucket--table-s3', /suffix "--table-s3"/],
    ];
    for (const [name, reason] of cases) {
      expect([name, checkS3BucketName(name)]).toEqual([name, expect.stringMatching(reason)]);
      expect(isS3BucketName(name)).toBe(false);
    }
    expect(isS3BucketName('podmin-demo')).toBe(true);
  });
});

describe('parseS3ObjectUrl', () => {
  it('parses s3://BUCKET/KEY with a valid bucket name only', () => {
    expect(parseS3ObjectUrl('s3://podmin-ca/trust/bundle.pem')).toEqual({
      bucket: 'podmin-ca',
      key: 'trust/bundle.pem',
    });
    for (const bad of [
      's3://podmin-ca/',
      's3://podmin-ca',
      's3://Podmin/key',
      's3://pod..min/key',
      's3://10.0.0.1/key',
      's3://bucket--ol-s3/key',
      'https://podmin-ca/key',
      's3://podmin-ca/a key',
    ]) {
      expect([bad, parseS3ObjectUrl(bad)]).toEqual([bad, undefined]);
    }
  });
});

describe('parseExactS3Object', () => {
  it('accepts a key of safe segments', () => {
    expect(parseExactS3Object('s3://podmin-ca/otel/exporter-ca.pem')).toEqual({
      bucket: 'podmin-ca',
      key: 'otel/exporter-ca.pem',
    });
    expect(isExactObjectKey('a'.repeat(1024))).toBe(true);
  });

  it.each([
    's3://podmin-ca/otel/*.pem',
    's3://podmin-ca/otel/ca?.pem',
    's3://podmin-ca/${aws:username}/ca.pem',
    "s3://podmin-ca/o'tel/ca.pem",
    's3://podmin-ca/otel//ca.pem',
    's3://podmin-ca/otel/../ca.pem',
    's3://podmin-ca/./ca.pem',
    's3://podmin-ca/otel/',
    `s3://podmin-ca/${'a'.repeat(1025)}`,
    's3://Bad_Bucket/ca.pem',
  ])('refuses %s', (bad) => {
    expect(parseExactS3Object(bad)).toBeUndefined();
  });
});
