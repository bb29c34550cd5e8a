import type { ProblemSink } from './checks';
import { checkKeys, childPath, describeType, expectList, expectRecord, isRecord } from './checks';
import { isDns1123Subdomain } from './names';

/** The cluster domain: Services resolve as `<service>.<namespace>.svc.cluster.local` (the spec). */
export const CLUSTER_DOMAIN = 'cluster.local';

/**
 * The `dnsPolicy` values podmin honours (DESIGN §6.26): the spec gives every Pod the cluster
 * DNS, which is Kubernetes' `ClusterFirst` (`ClusterFirstWithHostNet` for a hostNetwork Pod).
 */
export const HONOURED_DNS_POLICIES: readonly string[] = ['ClusterFirst', 'ClusterFirstWithHostNet'];

/** Most search domains a Pod may have, the node's included (Kubernetes' limit; glibc's since 2.26). */
export const MAX_DNS_SEARCHES = 32;

/** Most characters of a Pod's search list, spaces between domains included (Kubernetes' limit). */
export const MAX_DNS_SEARCH_CHARS = 2048;

/**
 * The resolver options (resolv.conf(5)) that take a whole-number value, with the range glibc
 * honours: beyond it glibc silently uses its own cap, and `attempts:0` or `timeout:0` would
 * make every lookup fail at once.
 */
const NUMERIC_OPTIONS: Readonly<Record<string, readonly [number, number]>> = {
  ndots: [0, 15],
  timeout: [1, 30],
  attempts: [1, 5],
};

/** The resolver options (glibc's resolv.conf(5)) that take no value. */
const FLAG_OPTIONS: readonly string[] = [
  'debug',
  'edns0',
  'no-aaaa',
  'no-check-names',
  'no-reload',
  'no-tld-query',
  'rotate',
  'single-request',
  'single-request-reopen',
  'trust-ad',
  'use-vc',
];

const OPTIONS_RULE = `resolver options are ${Object.keys(NUMERIC_OPTIONS).join(', ')} (each with a whole-number value) and ${FLAG_OPTIONS.join(', ')} (without one), as resolv.conf(5) lists them`;

/** The search list the spec gives every Pod of `namespace`, in its order. */
export function clusterSearches(namespace: string): string[] {
  return [`${namespace}.svc.${CLUSTER_DOMAIN}`, `svc.${CLUSTER_DOMAIN}`, CLUSTER_DOMAIN];
}

/** A resolver option as a Pod's `dnsConfig.options` holds it. */
export interface PodDnsOption {
  name: string;
  value?: string;
}

/** What a node writes into a Pod for its DNS: the spec's cluster DNS plus what the Pod adds. */
export interface NodePodDns {
  dnsPolicy: 'None';
  dnsConfig: {
    nameservers: string[];
    searches: string[];
    /** Absent when the Pod sets none, so such a Pod's manifest is what nodes always wrote. */
    options?: PodDnsOption[];
  };
}

function isSearchDomain(value: unknown): value is string {
  // Kubernetes accepts a trailing dot on a search domain, as resolv.conf does.
  return typeof value === 'string' && isDns1123Subdomain(value.replace(/\.$/, ''));
}

/**
 * The search list of a Pod of `namespace` that adds `extra`: the cluster's first (so a short
 * name is always a Service of the Pod's own namespace first), then `extra` without duplicates
 * (kubelet's merge), within Kubernetes' limits.
 */
function mergeSearches(namespace: string, extra: readonly string[]): string[] {
  const searches = clusterSearches(namespace);
  for (const domain of extra) {
    if (!searches.includes(domain)) searches.push(domain);
  }
  return searches;
}

function withinLimits(searches: readonly string[]): boolean {
  return searches.length <= MAX_DNS_SEARCHES && searches.join(' ').length <= MAX_DNS_SEARCH_CHARS;
}

/**
 * The DNS a node writes into the static Pod of `spec` (a Pod spec of `namespace`): the spec's
 * cluster DNS (dnsPolicy `None` with the node's address as the only nameserver and the cluster
 * search list, so it does not depend on kubelet's own DNS settings), plus the Pod's
 * `dnsConfig.searches` after the cluster's and its `dnsConfig.options`, which `validate`
 * accepted (`checkPodDns`). The Pod's `dnsPolicy` and `dnsConfig.nameservers` are replaced:
 * `validate` refuses any other than the cluster's. A payload committed before those checks is
 * not refused on the node: its unusable entries (a malformed search domain or option, searches
 * beyond the limits) are left out, as kubelet would otherwise refuse the whole Pod; a repeated
 * option keeps its last value, as kubelet's merge does.
 */
export function nodePodDns(
  spec: Record<string, unknown>,
  namespace: string,
  nodeAddress: string,
): NodePodDns {
  const config = isRecord(spec.dnsConfig) ? spec.dnsConfig : {};
  const extra = Array.isArray(config.searches) ? (config.searches as unknown[]) : [];
  const searches = mergeSearches(namespace, extra.filter(isSearchDomain));
  // Only an unchecked payload gets here over the limits; kubelet's own merge drops the tail too.
  while (!withinLimits(searches)) searches.pop();
  const options = new Map<string, PodDnsOption>();
  const given = Array.isArray(config.options) ? (config.options as unknown[]) : [];
  for (const option of given) {
    if (!isRecord(option) || typeof option.name !== 'string' || !/^[a-z0-9-]+$/.test(option.name)) {
      continue;
    }
    const value = option.value;
    if (value !== undefined && (typeof value !== 'string' || /[\s:]/.test(value))) continue;
    // kubelet writes an empty value as the bare name.
    options.set(
      option.name,
      value === undefined || value === '' ? { name: option.name } : { name: option.name, value },
    );
  }
  return {
    dnsPolicy: 'None',
    dnsConfig: {
      nameservers: [nodeAddress],
      searches,
      ...(options.size === 0 ? {} : { options: [...options.values()] }),
    },
  };
}

/**
 * Checks what of a Pod's `dnsConfig` the node keeps (DESIGN §6.26): `searches`, which it
 * appends to the cluster's, and `options`, which it writes into the Pod's resolv.conf. Each
 * problem names the field and what is allowed. `dnsPolicy` and `dnsConfig.nameservers`, which
 * the node cannot honour, are rows of `STATIC_POD_REFUSALS`.
 */
export function checkPodDns(
  spec: Record<string, unknown>,
  specPath: string,
  namespace: string | undefined,
  sink: ProblemSink,
): void {
  if (spec.dnsConfig === undefined) return;
  const path = childPath(specPath, 'dnsConfig');
  const config = expectRecord(spec.dnsConfig, path, sink);
  if (config === undefined) return;
  checkKeys(
    config,
    ['nameservers', 'searches', 'options'],
    path,
    sink,
    'is not a Kubernetes v1 PodDNSConfig field; its fields are nameservers, searches and options',
  );
  if (config.searches !== undefined) {
    checkSearches(config.searches, childPath(path, 'searches'), namespace ?? 'default', sink);
  }
  if (config.options !== undefined) {
    checkOptions(config.options, childPath(path, 'options'), sink);
  }
}

function checkSearches(value: unknown, path: string, namespace: string, sink: ProblemSink): void {
  const list = expectList(value, path, sink);
  if (list === undefined) return;
  const valid: string[] = [];
  list.forEach((domain, index) => {
    if (isSearchDomain(domain)) {
      valid.push(domain);
      return;
    }
    sink.add(
      `${path}[${index}]`,
      typeof domain === 'string'
        ? `"${domain}" is not a search domain; it must be a DNS-1123 subdomain: at most 253 lowercase letters, digits, "-" and ".", each label starting and ending with a letter or digit`
        : `must be a string search domain, not ${describeType(domain)}`,
    );
  });
  const cluster = clusterSearches(namespace);
  const merged = mergeSearches(namespace, valid);
  const room = `podmin puts the cluster's ${cluster.join(', ')} first and a Pod's search list may hold`;
  if (merged.length > MAX_DNS_SEARCHES) {
    sink.add(
      path,
      `adds ${merged.length - cluster.length} search domains; ${room} at most ${MAX_DNS_SEARCHES} domains, so at most ${MAX_DNS_SEARCHES - cluster.length} here`,
    );
  } else if (merged.join(' ').length > MAX_DNS_SEARCH_CHARS) {
    sink.add(
      path,
      `has ${merged.join(' ').length - cluster.join(' ').length - 1} characters of search domains (spaces included); ${room} at most ${MAX_DNS_SEARCH_CHARS} characters, so at most ${MAX_DNS_SEARCH_CHARS - cluster.join(' ').length - 1} here`,
    );
  }
}

function checkOptions(value: unknown, path: string, sink: ProblemSink): void {
  const list = expectList(value, path, sink);
  if (list === undefined) return;
  const seen = new Map<string, string>();
  list.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    const option = expectRecord(item, itemPath, sink);
    if (option === undefined) return;
    checkKeys(
      option,
      ['name', 'value'],
      itemPath,
      sink,
      'is not a Kubernetes v1 PodDNSConfigOption field; its fields are name and value',
    );
    const namePath = childPath(itemPath, 'name');
    const name = option.name;
    if (typeof name !== 'string' || name === '') {
      sink.add(namePath, `is required: the resolver option's name; ${OPTIONS_RULE}`);
      return;
    }
    const other = seen.get(name);
    if (other !== undefined) {
      sink.add(namePath, `"${name}" is already set by ${other}; set each resolver option once`);
    } else {
      seen.set(name, itemPath);
    }
    const valuePath = childPath(itemPath, 'value');
    const optionValue = option.value;
    if (optionValue !== undefined && typeof optionValue !== 'string') {
      sink.add(
        valuePath,
        `must be a string, not ${describeType(optionValue)}; quote the value, as in value: "2"`,
      );
      return;
    }
    const range = NUMERIC_OPTIONS[name];
    if (range !== undefined) {
      const [min, max] = range;
      const number =
        optionValue !== undefined && /^\d+$/.test(optionValue) ? Number(optionValue) : NaN;
      if (!(number >= min && number <= max)) {
        sink.add(
          valuePath,
          `${optionValue === undefined ? 'is required' : `"${optionValue}" is invalid`}: ${name} takes a whole number from ${min} through ${max} (glibc's range; beyond it the resolver silently uses its own limit)`,
        );
      }
    } else if (FLAG_OPTIONS.includes(name)) {
      if (optionValue !== undefined && optionValue !== '') {
        sink.add(valuePath, `must be omitted: ${name} takes no value`);
      }
    } else {
      sink.add(
        namePath,
        `"${name}" is not a resolver option, and the Pod's resolver would ignore it without a word; ${OPTIONS_RULE}`,
      );
    }
  });
}
