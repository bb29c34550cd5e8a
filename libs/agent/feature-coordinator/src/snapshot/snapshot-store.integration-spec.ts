import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { S3ObjectStore, createS3Client } from '@podmin/data-access-object-store';
import { PROTO_FILES, protoRoot } from '@podmin/agent-contracts';
import { emulatorBucket } from '@podmin/testing';
import { describeSnapshotFencing, snapshotWith } from '../__fixtures__/snapshot-fencing';
import { decodeSnapshot, encodeSnapshot } from './snapshot-codec';

const execFileAsync = promisify(execFile);

describeSnapshotFencing('snapshot fencing on the S3 emulator', async () => {
  const { client, bucket } = await emulatorBucket('snapshot', createS3Client);
  // Two leaders are two S3 clients of one bucket (the emulator's conditional PutObject).
  const store = new S3ObjectStore({ client, bucket });
  return { open: () => store, cleanup: () => Promise.resolve(client.destroy()) };
});

describe('snapshot bytes against protoc', () => {
  const value = { ...snapshotWith('1', '2', 'a'), generation: 12 };

  it('decodes to the same message with protoc', async () => {
    const { stdout } = await protoc(
      ['--decode=podmin.agent.v1.ServiceSnapshot'],
      encodeSnapshot(value),
    );
    expect(stdout).toContain('generation: 12');
    expect(stdout).toContain(`revision: "${value.revision}"`);
    expect(stdout).toContain('address: "2600:1f14:abc:1201:1::a"');
    expect(stdout).toContain('protocol: TCP');
  });

  it("equals protoc's serialization of the same message (canonical bytes)", async () => {
    const ours = encodeSnapshot(value);
    const { stdout: text } = await protoc(['--decode=podmin.agent.v1.ServiceSnapshot'], ours);
    const { stdout } = await protoc(
      ['--encode=podmin.agent.v1.ServiceSnapshot'],
      Buffer.from(text),
      'buffer',
    );
    expect(Buffer.from(stdout).equals(ours)).toBe(true);
    expect(decodeSnapshot(Buffer.from(stdout))).toEqual(value);
  });
});

/** Runs protoc on the snapshot schema with `input` on stdin. */
async function protoc(
  args: string[],
  input: Buffer,
  encoding: 'utf8' | 'buffer' = 'utf8',
): Promise<{ stdout: string | Buffer }> {
  const child = execFileAsync(
    'protoc',
    [`--proto_path=${protoRoot()}`, ...args, PROTO_FILES.snapshot],
    { encoding, maxBuffer: 64 * 1024 * 1024 },
  );
  child.child.stdin?.end(input);
  return child;
}
