import { etagsEqual, md5Etag } from './etag';

describe('md5Etag', () => {
  it('is the quoted hex MD5 of the content, like an S3 single-part upload', () => {
    expect(md5Etag('a')).toBe('"0cc175b9c0f1b6a831c399e269772661"');
    expect(md5Etag(Buffer.from('a'))).toBe(md5Etag('a'));
    expect(md5Etag('')).toBe('"d41d8cd98f00b204e9800998ecf8427e"');
  });
});

describe('etagsEqual', () => {
  it('ignores quotes and a weak marker but not the value', () => {
    expect(etagsEqual('"abc"', 'abc')).toBe(true);
    expect(etagsEqual('W/"abc"', '"abc"')).toBe(true);
    expect(etagsEqual('"abc"', '"abd"')).toBe(false);
    expect(etagsEqual('"', '"')).toBe(true);
  });
});
