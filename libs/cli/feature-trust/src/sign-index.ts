import { readIndexObject, updateIndex, type IndexSigning } from '@podmin/data-access-desired-state';
import {
  INDEX_KEY,
  parseSignedIndex,
  serializeIndex,
  type DesiredIndex,
} from '@podmin/util-desired-state';
import { PodminError } from '@podmin/util-errors';
import { podRevision } from '@podmin/util-receipts';
import { verifyIndexSignature } from '@podmin/util-trust';
import { readDeployerList } from './deployer-list';
import type { TrustDeps } from './trust.ports';

/** `podmin trust sign`'s request. */
export interface SignIndexRequest {
  /** `--yes`: sign an index that is not trusted now without asking (a script that reviewed it). */
  yes?: boolean;
}

/** How many entries `trust sign` names before it says how many more there are. */
const SHOWN_ENTRIES = 20;

/**
 * `podmin trust sign`: re-signs the current index unchanged as `signing`'s deployer, by the
 * same compare-and-swap as deploy. An index that verifies now is simply re-signed, and so is any
 * index while enforcement is off (no trusted deployer: nodes verify nothing, so signing changes
 * nothing they run; a note says so). One that does not verify under enforcement (unsigned, or
 * its signature no longer matches: an edit by hand, a removed signer) is what nodes refuse, and
 * signing it makes them run whatever a bucket writer put there: the command names the reason
 * and the entries, asks on a terminal (or needs `yes`), and signs exactly those entries; an
 * index that changed meanwhile is refused, nothing written.
 */
export async function signIndex(
  signing: IndexSigning,
  deps: Pick<TrustDeps, 'openBucket' | 'openStore' | 'reporter' | 'cluster' | 'interactive'>,
  request: SignIndexRequest = {},
): Promise<{ generation: number | undefined }> {
  const doing = `signing ${INDEX_KEY} of cluster ${deps.cluster}`;
  const store = await deps.openBucket();
  const read = await readIndexObject(store);
  const { index, signature } =
    read.status === 'present' ? parseSignedIndex(read.body) : { index: {}, signature: undefined };
  const entriesText = serializeIndex(index);
  const { doc, exists } = await readDeployerList(deps);
  const keys = Object.keys(index).sort();
  if (!exists) {
    // Nodes verify nothing yet, so signing changes nothing they run now; `trust add --sign`
    // signs the same way when it turns enforcement on.
    deps.reporter.info(
      `Enforcement is off for cluster ${deps.cluster} (no trusted deployer): nodes run ${INDEX_KEY} signed or not. Signed as ${signing.signer.signer}, its ${keys.length} ${keys.length === 1 ? 'entry keeps' : 'entries keep'} running once \`podmin trust add\` trusts ${signing.signer.signer}.`,
    );
  }
  const verdict = exists
    ? verifyIndexSignature({ cluster: deps.cluster, entriesText, signature, deployers: doc })
    : { trusted: true as const };
  if (!verdict.trusted) {
    deps.reporter.warn(
      `${INDEX_KEY} of cluster ${deps.cluster} is not trusted now (${verdict.reason}); signing it as ${signing.signer.signer} makes every node run its ${keys.length} ${keys.length === 1 ? 'entry' : 'entries'}:\n` +
        entryLines(index, keys),
    );
    await confirmSigning(
      deps,
      request,
      doing,
      `Sign these ${keys.length} entries as ${signing.signer.signer}?`,
    );
  }
  const result = await updateIndex(
    store,
    (current) => {
      if (serializeIndex(current) !== entriesText) {
        throw new PodminError(
          'CONFLICT',
          `${doing}: the index changed after it was read; nothing was written`,
          { hint: 'run `podmin trust sign` again to review the current entries' },
        );
      }
      return current;
    },
    { signing },
  );
  const generation = result.signature?.generation;
  deps.reporter.info(
    `Signed ${INDEX_KEY} of cluster ${deps.cluster} as ${signing.signer.signer}${generation === undefined ? '' : ` (generation ${generation})`}; its entries are unchanged.`,
  );
  return { generation };
}

/** One line per entry (`<nodegroup>/<name>  revision <12 hex>`), the first {@link SHOWN_ENTRIES}. */
function entryLines(index: DesiredIndex, keys: readonly string[]): string {
  const lines = keys.slice(0, SHOWN_ENTRIES).map((key) => {
    const pod = index[key]?.pod ?? '';
    let revision: string;
    try {
      revision = `revision ${podRevision(pod)}`;
    } catch {
      revision = pod;
    }
    return `  ${key}  ${revision}`;
  });
  if (keys.length > SHOWN_ENTRIES)
    lines.push(`  … and ${keys.length - SHOWN_ENTRIES} more (\`podmin list\` shows them all)`);
  return lines.length === 0 ? '  (none: nodes then run no Pods)' : lines.join('\n');
}

/** Asks on a terminal, else requires `--yes`; throws (nothing written) when not confirmed. */
async function confirmSigning(
  deps: Pick<TrustDeps, 'reporter' | 'interactive'>,
  request: SignIndexRequest,
  doing: string,
  question: string,
): Promise<void> {
  if (request.yes === true) return;
  if (!deps.interactive) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `${doing}: the index is not trusted now; confirmation required, nothing was written`,
      { hint: 'review the entries above (`podmin list`, `podmin history`), then pass --yes' },
    );
  }
  if (!(await deps.reporter.confirm(question))) {
    throw new PodminError('INVALID_ARGUMENT', `${doing}: not confirmed; nothing was written`);
  }
}
