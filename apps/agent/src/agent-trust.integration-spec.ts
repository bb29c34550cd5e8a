import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateKeyCommand, GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { putPayload } from '@podmin/data-access-desired-state';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { type BuiltAgent, daemonSetManifest, type StartedAgent, waitFor } from '@podmin/testing';
import {
  deploymentKey,
  INDEX_KEY,
  podPayloadKey,
  serializeIndex,
  type DesiredIndex,
  type IndexSignature,
} from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import {
  OCI_MANIFEST_MEDIA_TYPE,
  blobPath,
  emptyLayoutIndex,
  parseImageIndex,
  serializeLayoutIndex,
  withTag,
} from '@podmin/util-oci';
import { parseReceipt, receiptKey, type NodeReceipt } from '@podmin/util-receipts';
import {
  DEPLOYERS_KEY,
  generateSigningKey,
  localSigner,
  publicKeyOfPrivate,
  readPublicKey,
  serializeDeployers,
  signIndexText,
  type IndexSigner,
} from '@podmin/util-trust';
import { makeEmulatorNode, startEmulatorAgent } from './__fixtures__/emulator-node';
import { makeLocalNode, startLocalAgent, type LocalNode } from './__fixtures__/local-node';
import { podFilesOf } from './__fixtures__/pod-files';

/** A deployer's local Ed25519 key pair. */
interface TestDeployer {
  name: string;
  privatePem: string;
}

const TRUST_LIST = `/demo/_system/${DEPLOYERS_KEY}`;
const REPO = 'registry.podmin.internal/apps/hello';

/**
 * The built agent on the local provider with a trust list in its Parameter Store: it applies
 * what a trusted deployer signed, refuses every way a bucket writer could change what it runs
 * (keeping its static Pods byte-identical and naming the reason in health and its receipt), and
 * applies the next correctly signed index.
 */

/** Writes the Pod payload of `name` (NodeGroup default) running `image`; returns its index entry. */
async function writeEntry(
  objects: Parameters<typeof putPayload>[0],
  name: string,
  image: string,
): Promise<DesiredIndex> {
  const d = buildDeployment(daemonSetManifest({ name, image }), {
    source: 'test',
    name,
    nodegroup: 'default',
  });
  const pod = podPayloadKey('default', d.podYaml);
  await putPayload(objects, pod, d.podYaml);
  return { [deploymentKey('default', name)]: { pod } };
}

describe('podmin-agent runs only what a trusted deployer signed (built, local provider)', () => {
  // A real agent, six attacks, each seen in health and in a receipt written at most every 10 s.
  jest.setTimeout(300_000);

  let node: LocalNode;
  let objects: LocalDirectoryObjectStore;
  let running: StartedAgent | undefined;
  let previous: IndexSignature | undefined;

  const alice: TestDeployer = { name: 'alice', ...generateSigningKey() };
  const bob: TestDeployer = { name: 'bob', ...generateSigningKey() };

  /** Stores the trust list naming `deployers` where the node reads it. */
  async function trust(...deployers: TestDeployer[]): Promise<void> {
    const body = Buffer.from(
      serializeDeployers({
        version: 1,
        deployers: deployers.map((d) => {
          const key = publicKeyOfPrivate(d.privatePem, d.name);
          return {
            name: d.name,
            algorithm: key.algorithm,
            publicKey: key.pem,
            added: new Date().toISOString(),
          };
        }),
      }),
    );
    if (await node.secrets.exists(TRUST_LIST)) await node.secrets.update(TRUST_LIST, body);
    else await node.secrets.create(TRUST_LIST, body);
  }

  /** Publishes `apps/hello` tag `tag` as a one-manifest image; returns its digest. */
  async function publishImage(tag: string, salt: string): Promise<string> {
    const body = JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST_MEDIA_TYPE, salt });
    const digest = `sha256:${crypto.createHash('sha256').update(body).digest('hex')}`;
    const key = 'apps/hello/index.json';
    const current = fs.existsSync(path.join(node.bucket, key))
      ? parseImageIndex((await objects.get(key)).body, key)
      : emptyLayoutIndex();
    await objects.put(`apps/hello/${blobPath(digest)}`, body);
    await objects.put(
      key,
      serializeLayoutIndex(
        withTag(current, {
          tag,
          image: { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size: body.length },
          nested: [],
        }),
      ),
    );
    return digest;
  }

  /** Writes the Pod payload of `name` running `image` and returns its index entry. */
  const entryFor = (name: string, image: string): Promise<DesiredIndex> =>
    writeEntry(objects, name, image);

  /** Commits `index` signed by `who` as the write after the last signed one; returns its text. */
  async function commitSigned(index: DesiredIndex, who: TestDeployer = alice): Promise<string> {
    const signed = await signIndexText(
      localSigner(who.name, who.privatePem, who.name),
      'demo',
      serializeIndex(index),
      previous,
    );
    previous = signed.signature;
    await objects.put(INDEX_KEY, signed.text);
    return signed.text;
  }

  const agent = (): BuiltAgent => {
    if (running === undefined) throw new Error('the agent is not running');
    return running.agent;
  };

  /** The staticpod service's /readyz status and detail. */
  async function readiness(): Promise<{ status: number; detail: string }> {
    const res = await fetch(`http://127.0.0.1:${running?.ports.health ?? 0}/readyz`);
    const body = (await res.json()) as {
      services: Array<{ name: string; detail: string | null }>;
    };
    return {
      status: res.status,
      detail: body.services.find((s) => s.name === 'staticpod')?.detail ?? '',
    };
  }

  async function receipt(): Promise<NodeReceipt | undefined> {
    const key = receiptKey('default', 'node-1');
    if (!fs.existsSync(path.join(node.bucket, key))) return undefined;
    return parseReceipt((await objects.get(key)).body, { nodegroup: 'default', node: 'node-1' });
  }

  /**
   * Waits until /readyz and the node's receipt both name `reason` (after `untrusted desired
   * state: `), then checks the node's Pod files are still `files`, byte for byte.
   */
  async function expectRefused(
    attack: string,
    reason: RegExp,
    files: Record<string, string>,
  ): Promise<void> {
    const matches = (text: string | null | undefined): boolean =>
      text !== null &&
      text !== undefined &&
      text.startsWith('untrusted desired state: ') &&
      reason.test(text);
    const ready = await waitFor(
      async () => {
        const r = await readiness();
        return r.status === 503 && matches(r.detail) ? r : undefined;
      },
      `/readyz naming ${reason} after ${attack} (agent said: ${agent().tail(10)})`,
      30_000,
    );
    expect(ready.detail).toMatch(reason);
    const written = await waitFor(
      async () => {
        const r = await receipt();
        return matches(r?.error) ? r : undefined;
      },
      `the receipt naming ${reason} after ${attack}`,
      40_000,
    );
    expect(written.error).toMatch(reason);
    expect({ attack, files: podFilesOf(node.nodeRoot) }).toEqual({ attack, files });
  }

  beforeAll(async () => {
    node = await makeLocalNode('podmin-trust');
    objects = new LocalDirectoryObjectStore(node.bucket);
  });

  afterAll(async () => {
    await running?.agent.stop();
    node.cleanup();
  });

  it('applies signed desired state, refuses each tampering with its reason, and recovers', async () => {
    await trust(alice, bob);
    const digest = await publishImage('v1', 'one');
    const pinned = `${REPO}@${digest}`;
    const web = await entryFor('web', pinned);
    const first = await commitSigned(web);

    running = await startLocalAgent(node);
    const podFile = path.join(node.nodeRoot, 'etc/podmin/manifests/web.yaml');
    const firstPod = await waitFor(
      () => Promise.resolve(fs.existsSync(podFile) ? fs.readFileSync(podFile, 'utf8') : undefined),
      `the static Pod web (agent said: ${agent().tail(10)})`,
      60_000,
    );
    expect(firstPod).toContain(`@${digest}`);

    // A second signed write, so an older one exists to be written back.
    const both = { ...web, ...(await entryFor('api', 'hello:v1')) };
    await commitSigned(both);
    const applied = await waitFor(
      async () => {
        const r = await receipt();
        return r?.indexEtag === (await objects.get(INDEX_KEY)).etag &&
          r.error === null &&
          r.pods.length === 2
          ? r
          : undefined;
      },
      `both Pods applied (agent said: ${agent().tail(10)})`,
      60_000,
    );
    expect(applied.pods.map((p) => p.deployment)).toEqual(['default/api', 'default/web']);
    const files = podFilesOf(node.nodeRoot);
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['etc/podmin/manifests/web.yaml', 'etc/podmin/manifests/api.yaml']),
    );
    const signedText = (await objects.get(INDEX_KEY)).body.toString('utf8');
    const evil = await entryFor('evil', 'evil:v1');
    const evilPod = evil['default/evil']?.pod ?? '';

    // (a) An entry pointed at another payload, the signature kept.
    await objects.put(INDEX_KEY, signedText.replace(web['default/web']?.pod ?? '', evilPod));
    await expectRefused(
      'an entry pointed at another payload',
      /the signature by "alice" does not match this index/,
      files,
    );

    // (b) A new entry added by hand.
    await objects.put(
      INDEX_KEY,
      signedText.replace('{\n', `{\n  "default/evil": {\n    "pod": "${evilPod}"\n  },\n`),
    );
    await expectRefused(
      'an entry added by hand',
      /the signature by "alice" does not match this index/,
      files,
    );
    // Each refusal's cause is logged once, however many polls it lasts.
    const refusals = () =>
      agent()
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"refuse desired state"'));
    expect(refusals()).toHaveLength(1);

    // (c) An older signed index written back.
    await objects.put(INDEX_KEY, first);
    await expectRefused(
      'an older signed index written back',
      /older than generation \d+ this node applied \(an old index written back\)/,
      files,
    );

    // (d) An index signed by a key removed from the trust list.
    await trust(alice);
    await commitSigned({ ...both, ...evil }, bob);
    await expectRefused(
      'an index signed by a removed key',
      /the index is signed by "bob", who is not a trusted deployer \(trusted: alice\)/,
      files,
    );

    // (e) An unsigned index while enforcement is on.
    await objects.put(INDEX_KEY, serializeIndex({ ...both, ...evil }));
    await expectRefused(
      'an unsigned index',
      /the index is unsigned, and this cluster runs only what a trusted deployer signed \(alice\)/,
      files,
    );
    expect(refusals().length).toBeGreaterThanOrEqual(4);

    // (f) The tag moved to another manifest: the Pod names its digest, so nothing changes.
    const moved = await publishImage('v1', 'two');
    expect(moved).not.toBe(digest);
    const head = await fetch(
      `http://127.0.0.1:${running.ports.registry}/v2/apps/hello/manifests/v1`,
      { method: 'HEAD', headers: { accept: OCI_MANIFEST_MEDIA_TYPE } },
    );
    expect(head.headers.get('docker-content-digest')).toBe(moved);
    await new Promise((r) => setTimeout(r, 6_000));
    expect(podFilesOf(node.nodeRoot)).toEqual(files);
    expect(fs.readFileSync(podFile, 'utf8')).toContain(`@${digest}`);
    expect(fs.readFileSync(podFile, 'utf8')).not.toContain(moved);

    // A correctly signed new index is applied: the node recovers.
    await commitSigned(web);
    await waitFor(
      async () => {
        const r = await receipt();
        return r?.error === null &&
          r.indexEtag === (await objects.get(INDEX_KEY)).etag &&
          r.pods.length === 1
          ? r
          : undefined;
      },
      `the recovered receipt (agent said: ${agent().tail(10)})`,
      60_000,
    );
    expect((await readiness()).status).toBe(200);
    const recovered = podFilesOf(node.nodeRoot);
    expect(recovered['etc/podmin/manifests/web.yaml']).toBe(files['etc/podmin/manifests/web.yaml']);
    expect(Object.keys(recovered)).not.toContain('etc/podmin/manifests/api.yaml');
    expect(Object.keys(recovered)).not.toContain('etc/podmin/manifests/evil.yaml');
    expect(agent().output()).toContain('"msg":"trust desired state"');
  });
});

/**
 * The same check on the aws provider: the trust list in Parameter Store (the SSM emulator), the
 * index in S3, signed by an ECC_NIST_P256 key of the emulator's KMS as CI would sign it.
 */
describe('podmin-agent verifies an index signed with a KMS key (built, aws provider, emulator)', () => {
  jest.setTimeout(180_000);

  it('applies what the KMS key signed, refuses an entry added by hand, and applies the next signed index', async () => {
    const aws = await makeEmulatorNode('podmin-trust');
    const { emulator, objects, cluster, secrets: ssm } = aws;
    const kms = new KMSClient({
      region: emulator.region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    });
    const created = await kms.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    const arn = created.KeyMetadata?.Arn ?? '';
    const publicKey = await kms.send(new GetPublicKeyCommand({ KeyId: arn }));
    const key = readPublicKey(Buffer.from(publicKey.PublicKey ?? new Uint8Array()), arn);
    expect(key.algorithm).toBe('ecdsa-p256-sha256');
    await ssm.create(
      `/${cluster}/_system/${DEPLOYERS_KEY}`,
      Buffer.from(
        serializeDeployers({
          version: 1,
          deployers: [
            {
              name: 'ci',
              algorithm: key.algorithm,
              publicKey: key.pem,
              kmsKeyArn: arn,
              added: new Date().toISOString(),
            },
          ],
        }),
      ),
    );
    // As the CLI signs with --kms-key: one Sign of the statement, RAW, ECDSA_SHA_256 (DER).
    const signer: IndexSigner = {
      signer: 'ci',
      algorithm: 'ecdsa-p256-sha256',
      sign: async (statement) => {
        const signed = await kms.send(
          new SignCommand({
            KeyId: arn,
            Message: statement,
            MessageType: 'RAW',
            SigningAlgorithm: 'ECDSA_SHA_256',
          }),
        );
        return Buffer.from(signed.Signature ?? new Uint8Array());
      },
    };
    let previous: IndexSignature | undefined;
    const entryFor = (name: string): Promise<DesiredIndex> => writeEntry(objects, name, 'hello:v1');
    const commit = async (index: DesiredIndex): Promise<string> => {
      const signed = await signIndexText(signer, cluster, serializeIndex(index), previous);
      previous = signed.signature;
      await objects.put(INDEX_KEY, signed.text);
      return signed.text;
    };
    const web = await entryFor('web');
    const text = await commit(web);

    const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-trust-aws-'));
    const { agent, ports } = await startEmulatorAgent(aws, nodeRoot);
    const readiness = async (): Promise<{ status: number; detail: string }> => {
      const res = await fetch(`http://127.0.0.1:${ports.health}/readyz`);
      const body = (await res.json()) as {
        services: Array<{ name: string; detail: string | null }>;
      };
      return {
        status: res.status,
        detail: body.services.find((s) => s.name === 'staticpod')?.detail ?? '',
      };
    };
    try {
      const podFile = path.join(nodeRoot, 'etc/podmin/manifests/web.yaml');
      await waitFor(
        () => Promise.resolve(fs.existsSync(podFile) ? true : undefined),
        `the static Pod web (agent said: ${agent.tail(10)})`,
        60_000,
      );
      const generationFile = path.join(nodeRoot, 'var/lib/podmin/desired-generation');
      expect(fs.readFileSync(generationFile, 'utf8')).toBe(`${previous?.generation}\n`);
      const files = podFilesOf(nodeRoot);

      const evil = await entryFor('evil');
      await objects.put(
        INDEX_KEY,
        text.replace(
          '{\n',
          `{\n  "default/evil": {\n    "pod": "${evil['default/evil']?.pod ?? ''}"\n  },\n`,
        ),
      );
      const refused = await waitFor(
        async () => {
          const r = await readiness();
          return r.status === 503 && r.detail.startsWith('untrusted desired state: ')
            ? r
            : undefined;
        },
        `/readyz naming the refusal (agent said: ${agent.tail(10)})`,
        30_000,
      );
      expect(refused.detail).toBe(
        'untrusted desired state: the signature by "ci" does not match this index (its entries were changed after signing, or it was signed for another cluster)',
      );
      expect(podFilesOf(nodeRoot)).toEqual(files);

      await commit({ ...web, ...(await entryFor('api')) });
      await waitFor(
        async () =>
          fs.existsSync(path.join(nodeRoot, 'etc/podmin/manifests/api.yaml')) &&
          (await readiness()).status === 200
            ? true
            : undefined,
        `the next signed index applied (agent said: ${agent.tail(10)})`,
        60_000,
      );
      expect(Object.keys(podFilesOf(nodeRoot))).not.toContain('etc/podmin/manifests/evil.yaml');
      expect(fs.readFileSync(generationFile, 'utf8')).toBe(`${previous?.generation}\n`);
    } finally {
      await agent.stop();
      fs.rmSync(nodeRoot, { recursive: true, force: true });
      kms.destroy();
    }
  });
});
