import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { PodminError, ValidationError } from '@podmin/util-errors';
import { checkJoolArchive, type JoolArchiveExpectation } from '@podmin/util-dependencies';

const MAX_METADATA_BYTES = 64 * 1024;

/** Entry names of a gzip-compressed tar and the parsed `metadata.json` (undefined if absent). */
async function readArchive(
  localPath: string,
): Promise<{ entries: string[]; metadata: unknown; problems: string[] }> {
  const entries: string[] = [];
  const problems: string[] = [];
  let metadata: unknown;
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    entries.push(header.name);
    if (header.type !== 'file') problems.push(`${header.name} is a ${header.type}, not a file`);
    const wantMetadata = header.name.replace(/^\.\//, '') === 'metadata.json';
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (data: unknown) => {
      if (!wantMetadata) return;
      const chunk = data as Buffer;
      size += chunk.length;
      if (size <= MAX_METADATA_BYTES) chunks.push(chunk);
    });
    stream.on('end', () => {
      if (wantMetadata) {
        if (size > MAX_METADATA_BYTES) problems.push('metadata.json is larger than 64 KiB');
        else {
          try {
            metadata = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          } catch (err) {
            problems.push(`metadata.json is not JSON: ${(err as Error).message}`);
          }
        }
      }
      next();
    });
    stream.resume();
  });
  await pipeline(createReadStream(localPath), createGunzip(), tar);
  return { entries, metadata, problems };
}

/**
 * Checks a downloaded jool-builds module archive before it is mirrored: a readable gzip tar
 * holding exactly the published files, flat, whose `metadata.json` names the expected Jool
 * version, exact kernel release and architecture. Throws a ValidationError naming each
 * mismatch; nothing is uploaded then.
 */
export async function verifyJoolArchive(
  localPath: string,
  expected: JoolArchiveExpectation,
  source: string,
): Promise<void> {
  const subject = `checking the Jool module archive ${source}`;
  let read: Awaited<ReturnType<typeof readArchive>>;
  try {
    read = await readArchive(localPath);
  } catch (err) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${subject}: not a gzip tar: ${(err as Error).message}`,
      {
        fault: 'system',
        cause: err,
      },
    );
  }
  const problems = [
    ...read.problems.map((message) => ({ field: '(archive)', message })),
    ...checkJoolArchive(read.entries, read.metadata, expected),
  ];
  if (problems.length > 0) {
    throw new ValidationError(subject, problems, { code: 'INVALID_ARGUMENT', fault: 'system' });
  }
}
