import fs from 'node:fs';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import { readIndexObject } from '@podmin/data-access-desired-state';
import { InMemoryObjectStore, useTempDir } from '@podmin/testing';
import {
  INDEX_KEY,
  parseSignedIndex,
  serializeIndex,
  splitSignature,
} from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import { MAX_DEPLOYERS, parseDeployers, verifyIndexSignature } from '@podmin/util-trust';
import { FakeKmsKeys } from './__fakes__/fake-kms-keys';
import { generateKeyFiles, trustKeyDir } from './key-files';
import { addDeployer, keygen, listDeployers, removeDeployer } from './trust-commands';
import { signIndex } from './sign-index';
import { localSigner } from '@podmin/util-trust';
import type { TrustDeps } from './trust.ports';

const KMS_ARN = 'arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555';
const SYMMETRIC_ARN = 'arn:aws:kms:us-east-1:123456789012:key/symmetric';
const LIST = '/demo/_system/deployers';

describe('podmin trust operations', () => {
  const tmp = useTempDir('podmin-trust');

  function setup(options: { interactive?: boolean; answer?: boolean } = {}) {
    const reporter = new RecordingReporter();
    reporter.answer = options.answer ?? false;
    const file = path.join(tmp(), 'secrets.json');
    const store = new LocalSecretStore({ file, provider: 'aws-parameter-store' });
    const kms = new FakeKmsKeys();
    kms.addSigningKey(KMS_ARN);
    kms.addOtherKey({
      arn: SYMMETRIC_ARN,
      keySpec: 'SYMMETRIC_DEFAULT',
      keyUsage: 'ENCRYPT_DECRYPT',
      signingAlgorithms: [],
      enabled: true,
    });
    const bucket = new InMemoryObjectStore();
    const deps: TrustDeps = {
      cluster: 'demo',
      configDir: path.join(tmp(), 'config'),
      reporter,
      interactive: options.interactive ?? false,
      openStore: () => Promise.resolve(store),
      kms: () => Promise.resolve(kms),
      openBucket: () => Promise.resolve(bucket),
      now: () => new Date('2026-12-01T00:00:00Z'),
    };
    const stored = async () =>
      (await store.exists(LIST)) ? parseDeployers(await store.get(LIST), LIST) : undefined;
    const secretsFile = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined);
    return { deps, reporter, store, kms, bucket, stored, secretsFile };
  }

  async function aliceKey(deps: TrustDeps) {
    return generateKeyFiles(trustKeyDir(deps.configDir, 'demo'), 'alice', false);
  }

  it('keygen names the key after the user and prints the public key path and the next step', async () => {
    const { deps, reporter } = setup();
    const result = await keygen({ userName: 'Alice.Smith' }, deps);
    expect(result.name).toBe('alice-smith');
    expect(reporter.results).toEqual([result.publicKeyFile]);
    expect(reporter.infos.join('\n')).toContain(
      `podmin trust add alice-smith --public-key ${result.publicKeyFile}`,
    );
  });

  it('adds a local public key; the first one turns enforcement on and says how to re-sign', async () => {
    const { deps, reporter, stored } = setup();
    const key = await aliceKey(deps);
    const result = await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, deps);
    expect(result).toMatchObject({ enforcementTurnedOn: true, signed: false });
    const doc = await stored();
    expect(doc?.deployers).toEqual([
      {
        name: 'alice',
        algorithm: 'ed25519',
        publicKey: fs.readFileSync(key.publicKeyFile, 'utf8'),
        added: '2026-12-01T00:00:00.000Z',
      },
    ]);
    expect(reporter.warnings.join('\n')).toContain('Enforcement is now on for cluster demo');
    expect(reporter.infos.join('\n')).toContain('podmin trust sign --signer alice');
    expect(await listDeployers(deps)).toEqual({
      enforcement: true,
      deployers: [
        {
          name: 'alice',
          algorithm: 'ed25519',
          fingerprint: key.fingerprint,
          kmsKeyArn: null,
          added: '2026-12-01T00:00:00.000Z',
        },
      ],
    });
  });

  it('adds a KMS key after checking its spec, usage and algorithm', async () => {
    const { deps, stored, kms } = setup();
    await addDeployer({ name: 'ci', kmsKeyArn: KMS_ARN }, deps);
    expect(kms.calls).toEqual([`describe ${KMS_ARN}`, `publicKey ${KMS_ARN}`]);
    expect((await stored())?.deployers).toMatchObject([
      { name: 'ci', algorithm: 'ecdsa-p256-sha256', kmsKeyArn: KMS_ARN },
    ]);
    expect((await listDeployers(deps)).deployers[0]?.kmsKeyArn).toBe(KMS_ARN);
  });

  it('refuses a KMS key of the wrong type, naming what it is and what is allowed; nothing written', async () => {
    const { deps, secretsFile } = setup();
    const err = await addDeployer({ name: 'ci', kmsKeyArn: SYMMETRIC_ARN }, deps).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((err as Error).message).toContain('SYMMETRIC_DEFAULT key for ENCRYPT_DECRYPT');
    expect((err as Error).message).toContain(
      'ECC_NIST_P256, usage SIGN_VERIFY, algorithm ECDSA_SHA_256',
    );
    expect(secretsFile()).toBeUndefined();
    await expect(addDeployer({ name: 'ci', kmsKeyArn: 'alias/ci' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('--kms-key'),
    });
    expect(secretsFile()).toBeUndefined();
  });

  it('refuses a malformed or private key file, naming --public-key; nothing written', async () => {
    const { deps, secretsFile } = setup();
    const bad = path.join(tmp(), 'bad.pub');
    fs.writeFileSync(bad, '-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n');
    await expect(addDeployer({ name: 'bob', publicKeyFile: bad }, deps)).rejects.toMatchObject({
      message: expect.stringContaining(`--public-key ${bad}: is not a public key`),
    });
    const key = await aliceKey(deps);
    await expect(
      addDeployer({ name: 'bob', publicKeyFile: key.privateKeyFile }, deps),
    ).rejects.toMatchObject({ message: expect.stringContaining('is a private key') });
    await expect(
      addDeployer({ name: 'bob', publicKeyFile: path.join(tmp(), 'missing.pub') }, deps),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(secretsFile()).toBeUndefined();
  });

  it('refuses a taken name, a key trusted under another name, both keys, and a full list', async () => {
    const { deps, stored, kms } = setup();
    const key = await aliceKey(deps);
    await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, deps);
    const before = await stored();
    await expect(addDeployer({ name: 'alice', kmsKeyArn: KMS_ARN }, deps)).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
    await expect(
      addDeployer({ name: 'alice2', publicKeyFile: key.publicKeyFile }, deps),
    ).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: expect.stringContaining('already trusted as alice'),
    });
    await expect(
      addDeployer({ name: 'x', publicKeyFile: key.publicKeyFile, kmsKeyArn: KMS_ARN }, deps),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await stored()).toEqual(before);
    // Ed25519 keys are small: the list holds MAX_DEPLOYERS of them.
    for (let i = 1; i < MAX_DEPLOYERS; i++) {
      const more = await generateKeyFiles(trustKeyDir(deps.configDir, 'demo'), `dev-${i}`, false);
      await addDeployer({ name: `dev-${i}`, publicKeyFile: more.publicKeyFile }, deps);
    }
    expect((await stored())?.deployers).toHaveLength(MAX_DEPLOYERS);
    await expect(addDeployer({ name: 'one-more', kmsKeyArn: KMS_ARN }, deps)).rejects.toMatchObject(
      {
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(`at most ${MAX_DEPLOYERS}`),
      },
    );
    expect(kms.calls).not.toContain(`sign ${KMS_ARN}`);
  });

  it('refuses a deployer the 4 KiB parameter cannot hold, writing nothing', async () => {
    const { deps, stored, kms } = setup();
    let added = 0;
    let refusal: unknown;
    for (let i = 0; i < MAX_DEPLOYERS && refusal === undefined; i++) {
      const arn = `${KMS_ARN.slice(0, -2)}${String(i).padStart(2, '0')}`;
      kms.addSigningKey(arn);
      // Names of the full 63 characters: ten KMS deployers with them outgrow 4 KiB.
      const name = `ci-${i}-`.padEnd(63, 'x');
      refusal = await addDeployer({ name, kmsKeyArn: arn }, deps).then(
        () => void added++,
        (e: unknown) => e,
      );
    }
    expect(refusal).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('KiB a Parameter Store parameter holds'),
    });
    expect((await stored())?.deployers).toHaveLength(added);
    expect(added).toBeGreaterThanOrEqual(8);
  });

  it('removes a deployer; an unknown name names the trusted ones and writes nothing', async () => {
    const { deps, stored } = setup();
    const key = await aliceKey(deps);
    await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, deps);
    await addDeployer({ name: 'ci', kmsKeyArn: KMS_ARN }, deps);
    const before = await stored();
    const err = await removeDeployer({ name: 'bob' }, deps).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
    expect((err as Error).message).toContain('trusted: alice, ci');
    expect(await stored()).toEqual(before);
    expect(await removeDeployer({ name: 'ci' }, deps)).toEqual({ enforcement: true });
    expect((await stored())?.deployers.map((d) => d.name)).toEqual(['alice']);
  });

  it('removing the last deployer needs --yes without a terminal, then deletes the list', async () => {
    const { deps, stored } = setup();
    const key = await aliceKey(deps);
    await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, deps);
    await expect(removeDeployer({ name: 'alice' }, deps)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('confirmation required'),
    });
    expect(await stored()).toBeDefined();
    expect(await removeDeployer({ name: 'alice', yes: true }, deps)).toEqual({
      enforcement: false,
    });
    expect(await stored()).toBeUndefined();
    expect(await listDeployers(deps)).toEqual({ enforcement: false, deployers: [] });
  });

  it('asks on a terminal before removing the last deployer', async () => {
    const no = setup({ interactive: true, answer: false });
    const key = await aliceKey(no.deps);
    await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, no.deps);
    await expect(removeDeployer({ name: 'alice' }, no.deps)).rejects.toBeInstanceOf(PodminError);
    expect(await no.stored()).toBeDefined();
    no.reporter.answer = true;
    await removeDeployer({ name: 'alice' }, no.deps);
    expect(await no.stored()).toBeUndefined();
  });

  it('re-signs the current index unchanged so that it verifies against the trust list', async () => {
    const { deps, bucket, stored } = setup();
    const entries = serializeIndex({
      'default/web': { pod: `nodegroups/default/pods/sha512/${'a'.repeat(128)}.yaml` },
    });
    await bucket.putIfAbsent(INDEX_KEY, entries);
    const key = await aliceKey(deps);
    // --sign finds alice's private key under the trust directory by its fingerprint.
    const result = await addDeployer(
      { name: 'alice', publicKeyFile: key.publicKeyFile, sign: true },
      deps,
    );
    expect(result.signed).toBe(true);
    const read = await readIndexObject(bucket);
    if (read.status !== 'present') throw new Error('index missing');
    const text = read.body.toString('utf8');
    const split = splitSignature(text);
    expect(split?.entriesText).toBe(entries);
    const verdict = verifyIndexSignature({
      cluster: 'demo',
      entriesText: entries,
      signature: parseSignedIndex(text).signature,
      deployers: (await stored())!,
    });
    expect(verdict).toMatchObject({ trusted: true, signer: 'alice' });
    // Signed for another cluster, the same index does not verify.
    expect(
      verifyIndexSignature({
        cluster: 'other',
        entriesText: entries,
        signature: split?.signature,
        deployers: (await stored())!,
      }).trusted,
    ).toBe(false);
    // trust sign again: a higher generation, same entries.
    const again = await signIndex(
      {
        signer: localSigner('alice', fs.readFileSync(key.privateKeyFile, 'utf8'), 'key'),
        cluster: 'demo',
      },
      deps,
    );
    expect(again.generation).toBeGreaterThan(split!.signature!.generation);
  });

  describe('trust sign of an index that is not trusted now', () => {
    const web = `nodegroups/default/pods/sha512/${'a'.repeat(128)}.yaml`;
    const forged = `nodegroups/default/pods/sha512/${'f'.repeat(128)}.yaml`;

    /** alice trusted; the index holds web, unsigned (as a bucket writer could leave it). */
    async function untrusted(options: { interactive?: boolean; answer?: boolean } = {}) {
      const ctx = setup(options);
      const key = await aliceKey(ctx.deps);
      await addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile }, ctx.deps);
      await ctx.bucket.putIfAbsent(INDEX_KEY, serializeIndex({ 'default/web': { pod: web } }));
      const signing = {
        signer: localSigner('alice', fs.readFileSync(key.privateKeyFile, 'utf8'), 'key'),
        cluster: 'demo',
      };
      const indexText = async () => {
        const read = await readIndexObject(ctx.bucket);
        return read.status === 'present' ? read.body.toString('utf8') : undefined;
      };
      return { ...ctx, signing, indexText };
    }

    it('names the reason and the entries, and without a terminal needs --yes (nothing written)', async () => {
      const { deps, reporter, signing, indexText } = await untrusted();
      const before = await indexText();
      await expect(signIndex(signing, deps)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('confirmation required, nothing was written'),
      });
      expect(await indexText()).toBe(before);
      const warning = reporter.warnings.join('\n');
      expect(warning).toContain('is not trusted now (');
      expect(warning).toContain('unsigned');
      expect(warning).toContain(`default/web  revision ${'a'.repeat(12)}`);
      const signed = await signIndex(signing, deps, { yes: true });
      expect(signed.generation).toBeGreaterThan(0);
      expect(splitSignature((await indexText())!)?.signature?.signer).toBe('alice');
    });

    it('asks on a terminal: no writes nothing, yes signs', async () => {
      const { deps, reporter, signing, indexText } = await untrusted({ interactive: true });
      const before = await indexText();
      await expect(signIndex(signing, deps)).rejects.toMatchObject({
        message: expect.stringContaining('not confirmed; nothing was written'),
      });
      expect(await indexText()).toBe(before);
      reporter.answer = true;
      await signIndex(signing, deps);
      expect(splitSignature((await indexText())!)?.signature?.signer).toBe('alice');
    });

    it('signs only the entries it showed: an index changed meanwhile is refused', async () => {
      const { deps, reporter, bucket, signing, indexText } = await untrusted({
        interactive: true,
      });
      let changed = '';
      reporter.confirm = async () => {
        // A bucket writer adds an entry while the operator reads the list.
        changed = serializeIndex({ 'default/web': { pod: web }, 'default/x': { pod: forged } });
        await bucket.put(INDEX_KEY, changed);
        return true;
      };
      await expect(signIndex(signing, deps)).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining('the index changed after it was read'),
      });
      expect(await indexText()).toBe(changed);
    });

    it('re-signs an index that verifies without asking', async () => {
      const { deps, reporter, signing, indexText } = await untrusted();
      await signIndex(signing, deps, { yes: true });
      reporter.warnings.length = 0;
      const again = await signIndex(signing, deps);
      expect(again.generation).toBeGreaterThan(0);
      expect(reporter.warnings).toEqual([]);
      expect(splitSignature((await indexText())!)?.signature?.generation).toBe(again.generation);
    });

    it('signs without asking while enforcement is off, saying nodes verify nothing yet', async () => {
      const ctx = setup();
      const key = await aliceKey(ctx.deps);
      await ctx.bucket.putIfAbsent(INDEX_KEY, serializeIndex({ 'default/web': { pod: web } }));
      const signing = {
        signer: localSigner('alice', fs.readFileSync(key.privateKeyFile, 'utf8'), 'key'),
        cluster: 'demo',
      };
      // No terminal and no --yes: nothing to confirm, as no node checks signatures.
      const signed = await signIndex(signing, ctx.deps);
      expect(signed.generation).toBeGreaterThan(0);
      expect(ctx.reporter.warnings).toEqual([]);
      expect(ctx.reporter.infos.join('\n')).toContain(
        'Enforcement is off for cluster demo (no trusted deployer)',
      );
      const read = await readIndexObject(ctx.bucket);
      if (read.status !== 'present') throw new Error('index missing');
      expect(splitSignature(read.body.toString('utf8'))?.signature?.signer).toBe('alice');
    });
  });

  it('--sign without the private key here fails before writing anything', async () => {
    const { deps, secretsFile } = setup();
    const key = await aliceKey(deps);
    fs.rmSync(key.privateKeyFile);
    await expect(
      addDeployer({ name: 'alice', publicKeyFile: key.publicKeyFile, sign: true }, deps),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(secretsFile()).toBeUndefined();
  });

  it('signs with the KMS key when the first deployer is a KMS key and the terminal says yes', async () => {
    const { deps, bucket, kms, stored } = setup({ interactive: true, answer: true });
    await addDeployer({ name: 'ci', kmsKeyArn: KMS_ARN }, deps);
    expect(kms.calls.filter((c) => c.startsWith('sign'))).toEqual([`sign ${KMS_ARN}`]);
    const read = await readIndexObject(bucket);
    if (read.status !== 'present') throw new Error('index missing');
    const { entriesText, signature } = splitSignature(read.body.toString('utf8'))!;
    expect(
      verifyIndexSignature({
        cluster: 'demo',
        entriesText,
        signature,
        deployers: (await stored())!,
      }),
    ).toMatchObject({ trusted: true, signer: 'ci' });
  });
});
