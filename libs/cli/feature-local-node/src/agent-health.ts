/** What a podmin-agent reports about itself on its health endpoints (`agent` of `/readyz`). */
export interface ReportedAgent {
  cluster: string;
  nodegroup: string;
  nodeRoot: string;
  pid: number;
  version: string;
}

/** What answered on the health address. */
export type HealthAnswer =
  | { kind: 'none' }
  | { kind: 'agent'; ready: boolean; agent: ReportedAgent }
  | { kind: 'unnamed-agent' }
  | { kind: 'other'; detail: string };

function reportedAgent(value: unknown): ReportedAgent | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ['cluster', 'nodegroup', 'nodeRoot', 'version'] as const;
  if (v['name'] !== 'podmin-agent' || !Number.isInteger(v['pid'])) return undefined;
  if (!strings.every((k) => typeof v[k] === 'string')) return undefined;
  return {
    cluster: v['cluster'] as string,
    nodegroup: v['nodegroup'] as string,
    nodeRoot: v['nodeRoot'] as string,
    pid: v['pid'] as number,
    version: v['version'] as string,
  };
}

/** Asks `/readyz` on a loopback `host:port` who answers there and whether it is ready. */
export async function probeHealth(healthAddress: string): Promise<HealthAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`http://${healthAddress}/readyz`, { signal: AbortSignal.timeout(1000) });
    text = await res.text();
  } catch {
    return { kind: 'none' };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if ((b['status'] !== 'ok' && b['status'] !== 'unavailable') || !Array.isArray(b['services'])) {
    const type = res.headers.get('content-type');
    return {
      kind: 'other',
      detail: `/readyz answered HTTP ${res.status}${type ? ` ${type}` : ''}`,
    };
  }
  const agent = reportedAgent(b['agent']);
  return agent ? { kind: 'agent', ready: res.status === 200, agent } : { kind: 'unnamed-agent' };
}
