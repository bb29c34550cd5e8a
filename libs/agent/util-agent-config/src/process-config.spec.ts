import { awsAgentArgs, localAgentFlags } from '@podmin/testing';
import { ValidationError } from '@podmin/util-errors';
import {
  MIN_LEADER_DUTY_MS,
  leaderDutyWindowMs,
  minimumElectionLeaseMs,
  parseAgentProcessConfig,
  renewMarginMs,
} from './process-config';
import { parseOtelLogsSettings } from './otel-logs-settings';
import { ProviderRegistry } from '@podmin/util-names';
import { awsAgentRules, localAgentRules } from './provider-rules';

/** The two built-in providers' rules, as the agent's registry holds them. */
const providers = new ProviderRegistry({ aws: awsAgentRules, local: localAgentRules });

describe('parseAgentProcessConfig', () => {
  it('requires a node root for the local provider and derives the runtime directory', () => {
    expect(() => parseAgentProcessConfig(localAgentFlags, {}, providers)).toThrow(
      /PODMIN_NODE_ROOT: is required/,
    );
    const config = parseAgentProcessConfig(
      localAgentFlags,
      {
        PODMIN_NODE_ROOT: '/srv/node',
        PODMIN_NODE_ADDRESS: 'fd00::1',
      },
      providers,
    );
    expect(config).toMatchObject({
      nodeRoot: '/srv/node',
      runtimeDir: '/srv/node/run/podmin/agent',
      nodeAddress: 'fd00::1',
      localSecretsFile: '/srv/node/var/lib/podmin/secrets.json',
    });
  });

  it('defaults a VM node root to / and rejects relative paths', () => {
    const aws = awsAgentArgs('podmin-demo', 'us-east-1', 'demo');
    expect(parseAgentProcessConfig(aws, {}, providers).nodeRoot).toBe('/');
    expect(() =>
      parseAgentProcessConfig(
        localAgentFlags,
        {
          PODMIN_NODE_ROOT: 'node',
          PODMIN_LOCAL_SECRETS_FILE: 'x.json',
        },
        providers,
      ),
    ).toThrow(/PODMIN_NODE_ROOT[\s\S]*PODMIN_LOCAL_SECRETS_FILE/);
  });

  it('reads the node ID, DNS and coordination settings and the election timings, naming each bad one', () => {
    const base = { PODMIN_NODE_ROOT: '/srv/node', PODMIN_NODE_ADDRESS: 'fd00::1' };
    const config = parseAgentProcessConfig(
      localAgentFlags,
      {
        ...base,
        PODMIN_NODE_ID: 'node-1',
        PODMIN_AGENT_DNS_LISTEN: '127.0.0.1:5353',
        PODMIN_AGENT_COORDINATION_PORT: '18081',
        PODMIN_ELECTION_LEASE_MS: '12000',
        PODMIN_ELECTION_POLL_MS: '1000',
      },
      providers,
    );
    expect(config).toMatchObject({
      nodeId: 'node-1',
      dnsListen: { host: '127.0.0.1', port: 5353 },
      coordinationPort: 18081,
      kubeletPodsSocket: '/srv/node/var/lib/kubelet/pods-api/pods-api.sock',
      election: { leaseMs: 12_000, pollMs: 1_000 },
    });
    expect(parseAgentProcessConfig(localAgentFlags, base, providers)).toMatchObject({
      dnsListen: { host: '127.0.0.1', port: 1053 },
      coordinationPort: 8081,
      election: { leaseMs: 35_000, pollMs: 5_000 },
    });
    let message = '';
    try {
      parseAgentProcessConfig(
        localAgentFlags,
        {
          ...base,
          PODMIN_NODE_ID: 'a/b',
          PODMIN_AGENT_DNS_LISTEN: '0.0.0.0:53',
          PODMIN_AGENT_COORDINATION_PORT: '70000',
          PODMIN_ELECTION_LEASE_MS: '1000',
          PODMIN_ELECTION_POLL_MS: '800',
          PODMIN_KUBELET_PODS_SOCKET: 'pods.sock',
        },
        providers,
      );
    } catch (err) {
      message = (err as Error).message;
    }
    for (const field of [
      'PODMIN_NODE_ID',
      'PODMIN_AGENT_DNS_LISTEN',
      'PODMIN_AGENT_COORDINATION_PORT',
      'PODMIN_ELECTION_LEASE_MS',
      'PODMIN_ELECTION_POLL_MS',
      'PODMIN_KUBELET_PODS_SOCKET',
    ])
      expect(message).toContain(field);
  });
});

describe('log export settings (PODMIN_OTEL_LOGS_*)', () => {
  const base = { PODMIN_NODE_ROOT: '/srv/node', PODMIN_NODE_ADDRESS: 'fd00::1' };

  it('is off when unset, and reads mtls and the exact CA object', () => {
    expect(parseAgentProcessConfig(localAgentFlags, base, providers).otelLogs).toEqual({
      mtls: false,
      ca: undefined,
      problems: [],
    });
    const config = parseAgentProcessConfig(
      localAgentFlags,
      {
        ...base,
        PODMIN_OTEL_LOGS_MTLS: 'true',
        PODMIN_OTEL_LOGS_CA: 's3://trust-bucket/otel/ca (prod).pem',
      },
      providers,
    );
    expect(config.otelLogs.problems).toEqual([
      expect.objectContaining({ field: 'PODMIN_OTEL_LOGS_CA' }),
    ]);
    expect(
      parseOtelLogsSettings({
        PODMIN_OTEL_LOGS_MTLS: 'false',
        PODMIN_OTEL_LOGS_CA: 's3://trust-bucket/otel/ca.pem',
      }),
    ).toEqual({
      mtls: false,
      ca: { bucket: 'trust-bucket', key: 'otel/ca.pem', url: 's3://trust-bucket/otel/ca.pem' },
      problems: [],
    });
  });

  it('turns log export off on a bad value, naming the variable, without stopping the agent', () => {
    const config = parseAgentProcessConfig(
      localAgentFlags,
      { ...base, PODMIN_OTEL_LOGS_MTLS: 'yes', PODMIN_OTEL_LOGS_CA: 's3://trust-bucket/ca.pem' },
      providers,
    );
    expect(config.otelLogs).toEqual({
      mtls: false,
      ca: undefined,
      problems: [{ field: 'PODMIN_OTEL_LOGS_MTLS', message: 'must be true or false, not "yes"' }],
    });
    expect(Object.isFrozen(config.otelLogs)).toBe(true);
    for (const bad of [
      '',
      's3://trust-bucket/',
      's3://trust-bucket/a//b',
      's3://trust-bucket/a/../b',
      's3://Trust_Bucket/ca.pem',
      'https://trust-bucket.s3.amazonaws.com/ca.pem',
      `s3://trust-bucket/${'k'.repeat(1025)}`,
    ]) {
      const settings = parseOtelLogsSettings({ PODMIN_OTEL_LOGS_CA: bad });
      expect(settings.ca).toBeUndefined();
      expect(settings.problems).toEqual([
        {
          field: 'PODMIN_OTEL_LOGS_CA',
          message: expect.stringContaining('must be an exact object s3://BUCKET/KEY') as string,
        },
      ]);
    }
    expect(parseOtelLogsSettings({ PODMIN_OTEL_LOGS_MTLS: 'TRUE' }).problems).toHaveLength(1);
  });
});

describe('election timings', () => {
  const base = { PODMIN_NODE_ROOT: '/srv/node', PODMIN_NODE_ADDRESS: 'fd00::1' };
  /** The configuration error for a lease and poll, or undefined when they are accepted. */
  const refusal = (leaseMs: string, pollMs: string): ValidationError | undefined => {
    try {
      parseAgentProcessConfig(
        localAgentFlags,
        { ...base, PODMIN_ELECTION_LEASE_MS: leaseMs, PODMIN_ELECTION_POLL_MS: pollMs },
        providers,
      );
      return undefined;
    } catch (err) {
      if (err instanceof ValidationError) return err;
      throw err;
    }
  };

  it('derives the renew margin and the duty window in production proportion', () => {
    expect(renewMarginMs(35_000)).toBe(10_000);
    expect(renewMarginMs(6_000)).toBe(1_714);
    expect(leaderDutyWindowMs(35_000, 5_000)).toBe(20_000);
    expect(leaderDutyWindowMs(6_000, 1_000)).toBe(3_286);
    expect(MIN_LEADER_DUTY_MS).toBe(5_000);
  });

  it('finds the smallest lease that leaves the duty window for a poll', () => {
    expect(minimumElectionLeaseMs(1_000)).toBe(8_400);
    for (const pollMs of [100, 250, 500, 1_000, 1_234, 5_000, 20_000]) {
      const lease = minimumElectionLeaseMs(pollMs);
      expect(leaderDutyWindowMs(lease, pollMs)).toBeGreaterThanOrEqual(MIN_LEADER_DUTY_MS);
      expect(lease).toBeGreaterThanOrEqual(pollMs * 2);
      const shorterValid =
        leaderDutyWindowMs(lease - 1, pollMs) >= MIN_LEADER_DUTY_MS && lease - 1 >= pollMs * 2;
      expect(shorterValid).toBe(false);
    }
    // Where the poll rule, not the duty window, sets the lease.
    expect(minimumElectionLeaseMs(20_000)).toBe(40_000);
  });

  it.each([
    ['the defaults', undefined, undefined],
    ['the netns tier', '12000', '1000'],
    ['the smallest lease for a 1 s poll', '8400', '1000'],
    ['a lease with the longest poll it allows', '8000', '714'],
  ])('accepts %s', (_name, leaseMs, pollMs) => {
    const env = {
      ...base,
      ...(leaseMs === undefined ? {} : { PODMIN_ELECTION_LEASE_MS: leaseMs }),
      ...(pollMs === undefined ? {} : { PODMIN_ELECTION_POLL_MS: pollMs }),
    };
    const { election } = parseAgentProcessConfig(localAgentFlags, env, providers);
    expect(leaderDutyWindowMs(election.leaseMs, election.pollMs)).toBeGreaterThanOrEqual(
      MIN_LEADER_DUTY_MS,
    );
  });

  it('refuses a lease that leaves a leader too little time for its duties, naming the values and the rule', () => {
    const err = refusal('6000', '1000');
    expect(err?.code).toBe('INVALID_ARGUMENT');
    expect(err?.problems).toEqual([
      {
        field: 'PODMIN_ELECTION_LEASE_MS',
        message:
          'a lease of 6000 ms with a poll (PODMIN_ELECTION_POLL_MS) of 1000 ms leaves a leader 3286 ms ' +
          'of duties before its next renew (lease − renew margin 1714 ms − poll); ' +
          'leader duties need at least 5000 ms: use a lease of at least 8400 ms',
      },
    ]);
    expect(err?.message).toContain('podmin-agent configuration: PODMIN_ELECTION_LEASE_MS: a lease');
  });

  it('offers a shorter poll when one would do with the lease', () => {
    expect(refusal('8000', '1000')?.problems).toEqual([
      {
        field: 'PODMIN_ELECTION_LEASE_MS',
        message:
          'a lease of 8000 ms with a poll (PODMIN_ELECTION_POLL_MS) of 1000 ms leaves a leader 4714 ms ' +
          'of duties before its next renew (lease − renew margin 2286 ms − poll); ' +
          'leader duties need at least 5000 ms: use a lease of at least 8400 ms ' +
          '(or a PODMIN_ELECTION_POLL_MS of at most 714 ms)',
      },
    ]);
    expect(refusal('8000', '715')).toBeDefined();
  });

  it('names both rules when the poll is also more than half the lease', () => {
    const messages = refusal('1000', '800')?.problems.map((p) => `${p.field}: ${p.message}`);
    expect(messages).toEqual([
      'PODMIN_ELECTION_POLL_MS: a poll of 800 ms must be at most half of the lease ' +
        '(PODMIN_ELECTION_LEASE_MS 1000 ms): use a poll of at most 500 ms or a lease of at least 8120 ms',
      'PODMIN_ELECTION_LEASE_MS: a lease of 1000 ms with a poll (PODMIN_ELECTION_POLL_MS) of 800 ms ' +
        'leaves a leader no time (-86 ms) of duties before its next renew ' +
        '(lease − renew margin 286 ms − poll); leader duties need at least 5000 ms: ' +
        'use a lease of at least 8120 ms',
    ]);
  });

  it('judges timings together only when both are durations', () => {
    expect(refusal('soon', '1000')?.problems.map((p) => p.field)).toEqual([
      'PODMIN_ELECTION_LEASE_MS',
    ]);
  });
});
