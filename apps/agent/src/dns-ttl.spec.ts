import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import * as dnsPacket from 'dns-packet';
import ts from 'typescript';
import type * as DnsLibrary from '@podmin/agent-feature-dns';
import type * as SupervisorLibrary from '@podmin/agent-feature-supervisor';
import { localAgentFlags } from '@podmin/testing';

// The agent's cross-process constants, as the source tree has them.
const CONSTANTS = path.resolve(
  __dirname,
  '../../../libs/agent/util-agent-config/src/agent-constants.ts',
);

/** The entry of the agent library `name` in the source tree. */
function library(name: string): string {
  return path.resolve(__dirname, '../../../libs/agent', name, 'src/index.ts');
}

interface Observed {
  /** TTLs of an AAAA answer, the NS answer and a NODATA's SOA (TTL and minimum). */
  answers: number[];
  /** The supervisor's pause after the coordinator stopped. */
  shutdownMarginMs: number | undefined;
}

/**
 * Loads agent-dns's zone and podmin-agent's shutdown order against the constants module with
 * its one `DNS_TTL_SECONDS` line changed to `ttlSeconds` (nothing else edited), and reports
 * what they then do.
 */
function observeWithTtl(ttlSeconds: number): Observed {
  const source = fs.readFileSync(CONSTANTS, 'utf8');
  const line = /export const DNS_TTL_SECONDS = \d+;/;
  expect(source).toMatch(line);
  const edited = source.replace(line, `export const DNS_TTL_SECONDS = ${ttlSeconds};`);
  const { outputText } = ts.transpileModule(edited, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const constants: Record<string, unknown> = {};
  const evaluate = vm.runInThisContext(`(function (exports) {\n${outputText}\n})`) as (
    exports: Record<string, unknown>,
  ) => void;
  evaluate(constants);

  let observed: Observed | undefined;
  jest.isolateModules(() => {
    jest.doMock(CONSTANTS, () => constants);
    // Loaded after the mock, in this isolated registry, so they read the edited constants (by
    // path: the libraries' names stay static imports everywhere else in this project).
    const dns = jest.requireActual<typeof DnsLibrary>(library('feature-dns'));
    const supervisor = jest.requireActual<typeof SupervisorLibrary>(library('feature-supervisor'));
    const zone = dns.DnsZone.build({
      cluster: 'podmin',
      generation: 1,
      services: [{ namespace: 'default', name: 'web' }],
    });
    const ask = (name: string, type: 'AAAA' | 'NS' | 'TXT'): dnsPacket.DecodedPacket => {
      const query = dnsPacket.encode({
        type: 'query',
        id: 1,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ name, type, class: 'IN' }],
      });
      const reply = zone.answer(query, 'udp');
      if (reply === undefined) throw new Error(`no answer to ${type} ${name}`);
      return dnsPacket.decode(reply);
    };
    const ttls = (packet: dnsPacket.DecodedPacket): number[] =>
      (packet.answers ?? []).flatMap((a) => (a.type === 'OPT' ? [] : [a.ttl ?? -1]));
    const nodata = ask('web.default.svc.cluster.local', 'TXT');
    const soa = nodata.authorities?.[0];
    if (soa?.type !== 'SOA') throw new Error('no SOA in the NODATA answer');
    const config = supervisor.parseAgentArgs(localAgentFlags, { PODMIN_NODE_ROOT: '/srv/node' });
    if (typeof config === 'string') throw new Error('expected a config');
    const coordinator = supervisor
      .serviceSpecs(config, '/opt/podmin/bin')
      .find((s) => s.name === 'coordinator');
    observed = {
      answers: [
        ...ttls(ask('web.default.svc.cluster.local', 'AAAA')),
        ...ttls(ask('svc.cluster.local', 'NS')),
        soa.ttl ?? -1,
        soa.data.minimum ?? -1,
      ],
      shutdownMarginMs: coordinator?.pauseAfterStop?.ms,
    };
  });
  if (observed === undefined) throw new Error('nothing observed');
  return observed;
}

describe('the DNS TTL, one constant', () => {
  it('answers with it and waits it out at shutdown', () => {
    expect(observeWithTtl(5)).toEqual({ answers: [5, 5, 5, 5], shutdownMarginMs: 5_000 });
  });

  it('changed in its one place, changes the answers and the shutdown margin together', () => {
    expect(observeWithTtl(11)).toEqual({ answers: [11, 11, 11, 11], shutdownMarginMs: 11_000 });
  });
});
