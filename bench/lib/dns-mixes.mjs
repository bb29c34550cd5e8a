// The DNS bench's Services and query mixes (bench/dns.mjs describes the mixes and why).
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32 } from './prng.mjs';

/** The zone agent-dns serves, and NSD and CoreDNS with it. */
export const ZONE = 'svc.cluster.local';

/**
 * `serviceCount` Services spread over `namespaceCount` namespaces, and the mixes of queries a
 * node's agent-dns receives: `resolver` (`lookups` getaddrinfo lookups from Pods, with the
 * search list `clusterSearches(namespace)` gives and `ndots`), `resolver-0x20` (the same in
 * random case) and `hits`. The same arguments give the same queries on every run.
 */
export function dnsBenchData({ serviceCount, namespaceCount, lookups, ndots, clusterSearches }) {
  const namespaces = Array.from({ length: namespaceCount }, (_, i) => `team-${i}`);
  const services = Array.from({ length: serviceCount }, (_, i) => ({
    namespace: namespaces[i % namespaceCount],
    name: `svc-${Math.floor(i / namespaceCount)}`,
  }));
  const byNamespace = new Map(namespaces.map((ns) => [ns, []]));
  for (const s of services) byNamespace.get(s.namespace).push(s);

  // Seeded, so every run asks the same queries.
  const random = mulberry32(0x5eed);
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const externals = Array.from({ length: 500 }, (_, i) =>
    pick([`api-${i}.example.com`, `bucket-${i}.s3.us-east-1.amazonaws.com`, `h${i}.example.org`]),
  );
  /**
   * The queries agent-dns receives for one getaddrinfo lookup of `name` from a Pod of
   * `podNamespace`: glibc's candidates (the search list first below ndots dots, else the name
   * first), each asked A then AAAA, stopping at the first answered (a Service's name: NODATA
   * for A, the AAAA); only the candidates in svc.cluster.local reach agent-dns.
   */
  const lookup = (name, podNamespace) => {
    const searched = clusterSearches(podNamespace).map((domain) => `${name}.${domain}`);
    const dots = name.split('.').length - 1;
    const candidates = dots >= ndots ? [name, ...searched] : [...searched, name];
    const queries = [];
    for (const candidate of candidates) {
      if (candidate !== ZONE && !candidate.endsWith(`.${ZONE}`)) continue;
      queries.push(`${candidate} A`, `${candidate} AAAA`);
      const labels = candidate.split('.');
      const isService =
        labels.length === 5 && byNamespace.get(labels[1])?.some((s) => s.name === labels[0]);
      if (isService) break;
    }
    return queries;
  };
  const resolverQueries = [];
  const lookupKinds = { own: 0, other: 0, full: 0, external: 0 };
  for (let i = 0; i < lookups; i++) {
    const podNamespace = pick(namespaces);
    const r = random();
    if (r < 0.45) {
      lookupKinds.own++;
      resolverQueries.push(...lookup(pick(byNamespace.get(podNamespace)).name, podNamespace));
    } else if (r < 0.65) {
      lookupKinds.other++;
      const s = pick(services);
      resolverQueries.push(...lookup(`${s.name}.${s.namespace}`, podNamespace));
    } else if (r < 0.75) {
      lookupKinds.full++;
      const s = pick(services);
      resolverQueries.push(...lookup(`${s.name}.${s.namespace}.${ZONE}`, podNamespace));
    } else {
      lookupKinds.external++;
      resolverQueries.push(...lookup(pick(externals), podNamespace));
    }
  }
  const randomCase = (line) => {
    const [name, type] = line.split(' ');
    let out = '';
    for (const c of name) out += random() < 0.5 ? c.toUpperCase() : c;
    return `${out} ${type}`;
  };
  const mixes = [
    {
      name: 'resolver',
      nsdBudget: true,
      lines: resolverQueries,
      about: `${lookups} getaddrinfo lookups from Pods of ${namespaceCount} namespaces (${Object.entries(
        lookupKinds,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}), ndots:${ndots}`,
    },
    {
      name: 'resolver-0x20',
      nsdBudget: true,
      lines: resolverQueries.map(randomCase),
      about: 'the resolver mix with each letter in random case (every query new to a reply cache)',
    },
    {
      name: 'hits',
      nsdBudget: false,
      lines: services.map((s) => `${s.name}.${s.namespace}.${ZONE} AAAA`),
      about: `AAAA of each of the ${serviceCount} Services in turn`,
    },
  ];
  return { namespaces, services, mixes };
}

/** Writes each mix's dnsperf query file (`mix.file`) and its first 3,000 queries (`mix.checkFile`). */
export function writeMixFiles(dir, mixes) {
  for (const mix of mixes) {
    mix.file = path.join(dir, `${mix.name}.queries`);
    fs.writeFileSync(mix.file, mix.lines.map((l) => `${l}\n`).join(''));
    // One pass over the first queries, for comparing every server's rcodes query by query.
    mix.checkFile = path.join(dir, `${mix.name}.check`);
    fs.writeFileSync(
      mix.checkFile,
      mix.lines
        .slice(0, 3000)
        .map((l) => `${l}\n`)
        .join(''),
    );
  }
}
