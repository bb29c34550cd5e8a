import fs from 'node:fs';
import path from 'node:path';
import { useTempDir } from '@podmin/testing';
import { publicKeyOfPrivate, readPublicKey } from '@podmin/util-trust';
import { deployerNameFromUser, generateKeyFiles, localKeyFiles, trustKeyDir } from './key-files';

describe('deployerNameFromUser', () => {
  it('makes a DNS label of a local user name', () => {
    expect(deployerNameFromUser('Alice')).toBe('alice');
    expect(deployerNameFromUser('john.doe_2')).toBe('john-doe-2');
    expect(deployerNameFromUser('--x--')).toBe('x');
    expect(deployerNameFromUser('é')).toBe('deployer');
    expect(deployerNameFromUser('a'.repeat(70))).toBe('a'.repeat(63));
  });
});

describe('generateKeyFiles', () => {
  const tmp = useTempDir('podmin-trust-keys');

  it('writes a 0600 private key and its public key in a 0700 directory', async () => {
    const dir = trustKeyDir(path.join(tmp(), 'config'), 'demo');
    const result = await generateKeyFiles(dir, 'alice', false);
    expect(result.privateKeyFile).toBe(path.join(dir, 'alice.key'));
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(result.privateKeyFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(result.publicKeyFile).mode & 0o777).toBe(0o644);
    const pub = readPublicKey(fs.readFileSync(result.publicKeyFile), 'pub');
    expect(pub.algorithm).toBe('ed25519');
    expect(pub.fingerprint).toBe(result.fingerprint);
    expect(publicKeyOfPrivate(fs.readFileSync(result.privateKeyFile, 'utf8'), 'key').pem).toBe(
      pub.pem,
    );
    // Only the key files, no temporary leftovers.
    expect(fs.readdirSync(dir).sort()).toEqual(['alice.key', 'alice.pub']);
    expect(await localKeyFiles(dir)).toEqual([result.privateKeyFile]);
  });

  it('refuses to replace a key without force, and replaces it with force', async () => {
    const dir = trustKeyDir(tmp(), 'demo');
    const first = await generateKeyFiles(dir, 'alice', false);
    const before = fs.readFileSync(first.privateKeyFile, 'utf8');
    await expect(generateKeyFiles(dir, 'alice', false)).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: expect.stringContaining('alice.key already exists'),
    });
    expect(fs.readFileSync(first.privateKeyFile, 'utf8')).toBe(before);
    fs.chmodSync(first.privateKeyFile, 0o644);
    const second = await generateKeyFiles(dir, 'alice', true);
    expect(fs.readFileSync(second.privateKeyFile, 'utf8')).not.toBe(before);
    expect(fs.statSync(second.privateKeyFile).mode & 0o777).toBe(0o600);
  });

  it('refuses a name that is not a DNS label, writing nothing', async () => {
    const dir = trustKeyDir(tmp(), 'demo');
    await expect(generateKeyFiles(dir, 'Alice!', false)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('--name'),
    });
    expect(fs.existsSync(dir)).toBe(false);
  });
});
