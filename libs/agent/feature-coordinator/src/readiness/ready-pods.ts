import type { KubeletPod } from '@podmin/agent-data-access-kubelet-pods';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';
import type { LocalReadyPod } from '../coordinator.ports';
import { compareText } from '../snapshot/snapshot-codec';

/** The Pod's IPv6 address in canonical RFC 5952 text: its first podIP that is IPv6. */
export function podIpv6(pod: KubeletPod): string | undefined {
  for (const ip of pod.podIPs) {
    const groups = parseIpv6(ip);
    if (groups) return formatIpv6(groups);
  }
  return undefined;
}

/** The annotation agent-staticpod stamps on each static Pod with its deployment's revision. */
export const POD_REVISION_ANNOTATION = 'podmin.dev/revision';

/** The Ready Pods among `pods` as the port reports them: Ready with an IPv6 address, sorted. */
export function readyPods(pods: Iterable<KubeletPod>): LocalReadyPod[] {
  const out: LocalReadyPod[] = [];
  for (const pod of pods) {
    if (!pod.ready) continue;
    const address = podIpv6(pod);
    if (address === undefined) continue;
    out.push(
      Object.freeze({
        namespace: pod.namespace,
        pod: pod.name,
        labels: Object.freeze({ ...pod.labels }),
        address,
        ...(pod.annotations[POD_REVISION_ANNOTATION] === undefined
          ? {}
          : { revision: pod.annotations[POD_REVISION_ANNOTATION] }),
      }),
    );
  }
  return out.sort(compareReady);
}

// By canonical address text in byte order, as the snapshot orders its backends.
function compareReady(a: LocalReadyPod, b: LocalReadyPod): number {
  return (
    compareText(a.address, b.address) ||
    compareText(a.namespace, b.namespace) ||
    compareText(a.pod, b.pod)
  );
}
