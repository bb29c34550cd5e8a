// The release workflow publishes the agent where production `setup` looks for it, and gates it
// on the eBPF objects reproducing with the pinned toolchain: read from the files themselves, so
// a renamed asset, a dropped architecture or an unpinned compiler fails here, not in a release.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { findFileDependency } from '@podmin/util-dependencies';

const REPO = path.resolve(__dirname, '../../../..');
const read = (file: string) => fs.readFileSync(path.join(REPO, file), 'utf8');

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  needs?: string | string[];
  container?: string;
  'runs-on'?: string;
  permissions?: Record<string, string>;
  strategy?: { matrix: { include: Array<{ arch: string; runner: string }> } };
  steps: Step[];
}
interface Workflow {
  on: { push?: { tags?: string[] } };
  jobs: Record<string, Job>;
}

const workflow = (file: string) => parse(read(file)) as Workflow;
const runs = (job: Job | undefined) => (job?.steps ?? []).map((s) => s.run ?? s.uses ?? '');

describe('.github/workflows/release.yml', () => {
  const release = workflow('.github/workflows/release.yml');

  it('runs on version tags and builds with the release script on amd64 and arm64', () => {
    expect(release.on.push?.tags).toEqual(['v[0-9]+.[0-9]+.[0-9]+*']);
    const build = release.jobs['build'];
    expect(build?.strategy?.matrix.include.map((m) => m.arch)).toEqual(['amd64', 'arm64']);
    expect(runs(build)).toContain(
      'bash tools/release/build-agent-artifact.sh "${RUNNER_TEMP}/release"',
    );
  });

  it("publishes only identical builds, attested, as the release assets setup's catalog names", () => {
    const publish = release.jobs['publish'];
    expect(publish?.needs).toBe('build');
    expect(publish?.permissions).toMatchObject({
      'id-token': 'write',
      attestations: 'write',
      contents: 'write',
    });
    const steps = runs(publish);
    const at = (what: string) => steps.findIndex((s) => s.includes(what));
    expect(at('cmp "$file"')).toBeGreaterThanOrEqual(0);
    expect(at('actions/attest-build-provenance@')).toBeGreaterThan(at('cmp "$file"'));
    expect(at('gh release create')).toBeGreaterThan(at('actions/attest-build-provenance@'));
    // Where setup fetches: the GitHub release of podplane/podmin named after the version, the
    // asset the script writes, and its .sha512.
    const agent = findFileDependency('podmin-agent');
    expect(agent?.versions).toEqual({
      kind: 'github-releases',
      repo: 'podplane/podmin',
      tagPrefix: 'v',
    });
    expect(agent?.artifact).toEqual({
      kind: 'github-asset',
      asset: 'podmin-agent-v{version}.tar.gz',
    });
    expect(agent?.digest).toMatchObject({
      kind: 'checksum-file',
      suffixes: expect.arrayContaining(['.sha512']) as unknown,
    });
    expect(read('tools/release/build-agent-artifact.sh')).toContain(
      'name="podmin-agent-v${version}.tar.gz"',
    );
  });

  it('builds nothing unless the eBPF objects reproduce in the pinned Debian 12 toolchain', () => {
    const ebpf = release.jobs['ebpf'];
    expect(release.jobs['build']?.needs).toBe('ebpf');
    expect(ebpf?.container).toBe('debian:12');
    expect(runs(ebpf).slice(1)).toEqual([
      'bash bpf/install-toolchain.sh',
      'bash bpf/build.sh --check',
    ]);
    // The pins are the toolchain that built the committed objects, exact Debian versions.
    const recorded = read('bpf/obj/TOOLCHAIN');
    expect(recorded).toMatch(/^Debian clang version 14\.\d+\.\d+/);
    for (const pkg of ['clang-14', 'llvm-14', 'libbpf-dev'])
      expect(recorded).toMatch(new RegExp(`^${pkg}=\\d+:[\\w.+~-]+$`, 'm'));
  });
});

describe('.github/workflows/ci.yml', () => {
  it('byte-compares the eBPF objects in the pinned toolchain, not with the runner clang', () => {
    const ci = workflow('.github/workflows/ci.yml');
    expect(ci.jobs['ebpf']?.container).toBe('debian:12');
    expect(runs(ci.jobs['ebpf'])).toContain('bash bpf/build.sh --check');
    const affected = runs(ci.jobs['affected']).find((s) => s.includes('check-generated'));
    expect(affected).toContain('--exclude=bpf');
  });
});
