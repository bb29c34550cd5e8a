import { daemonSetWithPodSpec, problemsOf } from './__fixtures__/daemonset';
import { buildDeployment } from './deployment';
import { MAX_DNS_SEARCHES, clusterSearches, nodePodDns } from './pod-dns';
import { STATIC_POD_REFUSALS } from './static-pod-fields';

const SPEC = 'DaemonSet spec.template.spec';

/** {@link daemonSetWithPodSpec} in `namespace`, `product` when omitted. */
const daemonSet = (podSpec: Record<string, unknown>, namespace = 'product'): string =>
  daemonSetWithPodSpec(podSpec, namespace);

function refusalMessage(field: string): string {
  const row = STATIC_POD_REFUSALS.find((r) => r.field === field);
  if (row === undefined) throw new Error(`no row for ${field}`);
  return `cannot be used: ${row.why}; instead, ${row.instead}`;
}

const options = (...items: unknown[]) => ({ dnsConfig: { options: items } });

describe("a Pod's DNS settings (issue 30, DESIGN §6.26)", () => {
  describe('accepted: what the node keeps', () => {
    it.each([
      ['no DNS settings', {}],
      ['dnsPolicy ClusterFirst', { dnsPolicy: 'ClusterFirst' }],
      [
        'dnsPolicy ClusterFirstWithHostNet with hostNetwork',
        { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true },
      ],
      ['dnsConfig.options ndots "2"', options({ name: 'ndots', value: '2' })],
      [
        'dnsConfig.options timeout, attempts, ndots at their bounds',
        options(
          { name: 'ndots', value: '0' },
          { name: 'timeout', value: '30' },
          { name: 'attempts', value: '5' },
        ),
      ],
      [
        'dnsConfig.options flags without a value (or an empty one)',
        options(
          { name: 'edns0' },
          { name: 'single-request-reopen' },
          { name: 'rotate', value: '' },
        ),
      ],
      [
        'dnsConfig.searches appended after the cluster',
        { dnsConfig: { searches: ['corp.example.com', 'example.internal.', 'cluster.local'] } },
      ],
      ['an empty dnsConfig.nameservers', { dnsConfig: { nameservers: [] } }],
    ])('%s', (_title, podSpec) => {
      expect(problemsOf(daemonSet(podSpec))).toEqual([]);
    });

    it('keeps the Pod DNS settings in the payload exactly as written', () => {
      const dnsConfig = {
        options: [{ name: 'ndots', value: '2' }],
        searches: ['corp.example.com'],
      };
      const deployment = buildDeployment(daemonSet({ dnsPolicy: 'ClusterFirst', dnsConfig }), {
        source: 'app.yaml',
      });
      expect(deployment.pod['spec']).toMatchObject({ dnsPolicy: 'ClusterFirst', dnsConfig });
    });
  });

  describe('refused: what the node cannot honour, naming the field, why and the podmin way', () => {
    it.each([
      ['Default', { dnsPolicy: 'Default' }],
      ['None', { dnsPolicy: 'None', dnsConfig: { nameservers: ['2001:db8::53'] } }],
      ['an unknown policy', { dnsPolicy: 'ClusterFist' }],
    ])('dnsPolicy %s', (_title, podSpec) => {
      const problems = problemsOf(daemonSet(podSpec));
      expect(problems).toContainEqual({
        field: `${SPEC}.dnsPolicy`,
        message: refusalMessage('dnsPolicy'),
      });
      expect(refusalMessage('dnsPolicy')).toMatch(
        /CoreDNS on the node's address.*Service names would not resolve; instead, omit dnsPolicy or set ClusterFirst or ClusterFirstWithHostNet/,
      );
    });

    it('dnsConfig.nameservers, any nameserver', () => {
      expect(problemsOf(daemonSet({ dnsConfig: { nameservers: ['1.1.1.1'] } }))).toEqual([
        {
          field: `${SPEC}.dnsConfig.nameservers`,
          message: refusalMessage('dnsConfig.nameservers'),
        },
      ]);
      expect(refusalMessage('dnsConfig.nameservers')).toMatch(
        /another nameserver would bypass it.*; instead, remove dnsConfig.nameservers/,
      );
    });

    it.each([
      [
        'dnsConfig not a mapping',
        { dnsConfig: ['ndots:2'] },
        'dnsConfig',
        'must be a mapping, not a list',
      ],
      [
        'an unknown dnsConfig field',
        { dnsConfig: { option: [] } },
        'dnsConfig.option',
        'is not a Kubernetes v1 PodDNSConfig field; its fields are nameservers, searches and options',
      ],
      [
        'an invalid search domain',
        { dnsConfig: { searches: ['ok.example', 'Bad_Domain'] } },
        'dnsConfig.searches[1]',
        '"Bad_Domain" is not a search domain; it must be a DNS-1123 subdomain',
      ],
      [
        'a search domain that is not a string',
        { dnsConfig: { searches: [7] } },
        'dnsConfig.searches[0]',
        'must be a string search domain, not the number 7',
      ],
      [
        'an option without a name',
        options({ value: '2' }),
        'dnsConfig.options[0].name',
        "is required: the resolver option's name; resolver options are ndots, timeout, attempts",
      ],
      [
        'an unknown option (a typo would otherwise vanish)',
        options({ name: 'ndot', value: '2' }),
        'dnsConfig.options[0].name',
        '"ndot" is not a resolver option, and the Pod\'s resolver would ignore it without a word',
      ],
      [
        'an unknown option field',
        options({ name: 'ndots', value: '2', values: ['3'] }),
        'dnsConfig.options[0].values',
        'is not a Kubernetes v1 PodDNSConfigOption field; its fields are name and value',
      ],
      [
        'an option set twice',
        options({ name: 'ndots', value: '2' }, { name: 'ndots', value: '3' }),
        'dnsConfig.options[1].name',
        '"ndots" is already set by spec.template.spec.dnsConfig.options[0]; set each resolver option once',
      ],
    ])('%s', (_title, podSpec, field, message) => {
      const problems = problemsOf(daemonSet(podSpec));
      expect(problems).toHaveLength(1);
      expect(problems[0]?.field).toBe(`${SPEC}.${field}`);
      expect(problems[0]?.message).toContain(message);
    });

    it.each([
      ['ndots', 2, 'must be a string, not the number 2; quote the value, as in value: "2"'],
      ['ndots', '16', '"16" is invalid: ndots takes a whole number from 0 through 15'],
      ['attempts', '0', '"0" is invalid: attempts takes a whole number from 1 through 5'],
      ['timeout', undefined, 'is required: timeout takes a whole number from 1 through 30'],
      ['rotate', 'true', 'must be omitted: rotate takes no value'],
    ])('resolver option %s with the value %j', (name, value, message) => {
      const problems = problemsOf(daemonSet(options({ name, value })));
      expect(problems).toEqual([
        { field: `${SPEC}.dnsConfig.options[0].value`, message: expect.stringContaining(message) },
      ]);
    });

    it('more search domains than fit after the cluster three', () => {
      const searches = Array.from({ length: MAX_DNS_SEARCHES - 2 }, (_, i) => `d${i}.example`);
      expect(problemsOf(daemonSet({ dnsConfig: { searches: searches.slice(1) } }))).toEqual([]);
      expect(problemsOf(daemonSet({ dnsConfig: { searches } }))).toEqual([
        {
          field: `${SPEC}.dnsConfig.searches`,
          message:
            "adds 30 search domains; podmin puts the cluster's product.svc.cluster.local, svc.cluster.local, cluster.local first and a Pod's search list may hold at most 32 domains, so at most 29 here",
        },
      ]);
    });

    it('a search list longer than 2048 characters with the cluster three', () => {
      // The cluster's take 57 characters in namespace product, plus one space: 1990 remain.
      const long = (c: string) => [c.repeat(63), c.repeat(63), c.repeat(63)].join('.');
      const searches = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map(long);
      expect(searches.join(' ')).toHaveLength(1919);
      expect(problemsOf(daemonSet({ dnsConfig: { searches } }))).toEqual([]);
      expect(problemsOf(daemonSet({ dnsConfig: { searches: [...searches, long('k')] } }))).toEqual([
        {
          field: `${SPEC}.dnsConfig.searches`,
          message:
            "has 2111 characters of search domains (spaces included); podmin puts the cluster's product.svc.cluster.local, svc.cluster.local, cluster.local first and a Pod's search list may hold at most 2048 characters, so at most 1990 here",
        },
      ]);
    });

    it('names every refusal of one Pod at once', () => {
      const problems = problemsOf(
        daemonSet({
          dnsPolicy: 'None',
          dnsConfig: { nameservers: ['2001:db8::53'], options: [{ name: 'ndots', value: '99' }] },
        }),
      );
      expect(problems.map((p) => p.field)).toEqual([
        `${SPEC}.dnsPolicy`,
        `${SPEC}.dnsConfig.nameservers`,
        `${SPEC}.dnsConfig.options[0].value`,
      ]);
    });
  });
});

describe('nodePodDns: what a node writes into the static Pod', () => {
  const NODE = '2600:1f14::10';

  it('is the spec cluster DNS, unchanged, for a Pod without DNS settings', () => {
    expect(nodePodDns({}, 'product', NODE)).toEqual({
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: [NODE],
        searches: ['product.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      },
    });
    expect(clusterSearches('default')).toEqual([
      'default.svc.cluster.local',
      'svc.cluster.local',
      'cluster.local',
    ]);
  });

  it('keeps the options and appends the searches after the cluster ones, without duplicates', () => {
    const dns = nodePodDns(
      {
        dnsPolicy: 'ClusterFirst',
        dnsConfig: {
          options: [
            { name: 'ndots', value: '2' },
            { name: 'edns0' },
            { name: 'rotate', value: '' },
          ],
          searches: ['corp.example.com', 'svc.cluster.local', 'corp.example.com'],
        },
      },
      'product',
      NODE,
    );
    expect(dns).toEqual({
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: [NODE],
        searches: [
          'product.svc.cluster.local',
          'svc.cluster.local',
          'cluster.local',
          'corp.example.com',
        ],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }, { name: 'rotate' }],
      },
    });
  });

  it("replaces an older payload's policy and nameservers and leaves out what kubelet would refuse", () => {
    const dns = nodePodDns(
      {
        dnsPolicy: 'Default',
        dnsConfig: {
          nameservers: ['1.1.1.1'],
          searches: ['Bad_Domain', 7, ...Array.from({ length: 40 }, (_, i) => `d${i}.example`)],
          options: [
            { name: 'ndots', value: '2' },
            { value: '1' },
            { name: 'bad name' },
            { name: 'timeout', value: 3 },
            { name: 'ndots', value: '3' },
          ],
        },
      },
      'default',
      NODE,
    );
    expect(dns.dnsPolicy).toBe('None');
    expect(dns.dnsConfig.nameservers).toEqual([NODE]);
    expect(dns.dnsConfig.searches).toHaveLength(MAX_DNS_SEARCHES);
    expect(dns.dnsConfig.searches.slice(0, 4)).toEqual([
      'default.svc.cluster.local',
      'svc.cluster.local',
      'cluster.local',
      'd0.example',
    ]);
    // A repeated option keeps its last value, as kubelet's merge does.
    expect(dns.dnsConfig.options).toEqual([{ name: 'ndots', value: '3' }]);
  });
});
