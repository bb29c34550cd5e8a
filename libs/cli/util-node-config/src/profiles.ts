/** The two kinds of node podmin configures: an AWS VM and this machine's local node. */
export type NodeProfileName = 'aws' | 'local';

/**
 * Every intended difference between an AWS VM's node configuration and a local node's. The
 * renderers read nothing else that tells the two apart: values both kinds of node compute for
 * themselves (addresses, paths, the sandbox image, reservations) are inputs, not profile.
 */
export interface NodeProfile {
  /**
   * The container runtime every Pod runs under (containerd's default runtime). `runsc`: the
   * spec's VM runs every Pod in gVisor and ships no runc. `runc`: a local node runs on a
   * development machine or CI sandbox where gVisor is not installed; the node stack
   * (tools/node-stack) provides runc and containerd's runc shim instead.
   */
  readonly runtime: 'runsc' | 'runc';
  /**
   * kubelet's and the runtime's cgroup driver. `systemd`: on a VM kubelet and containerd are
   * systemd units and systemd owns the cgroup hierarchy. `cgroupfs`: a local node's kubelet is a
   * plain child process of the CLI, on whatever hierarchy the machine has, with no systemd unit
   * of its own to delegate cgroups to.
   */
  readonly cgroupDriver: 'systemd' | 'cgroupfs';
  /**
   * containerd's `restrict_oom_score_adj`: sandboxed development machines (containers, CI)
   * may refuse to lower a process's oom_score_adj, so a local node never asks for less than
   * containerd has. A VM's containerd runs as root on its own kernel and may.
   */
  readonly restrictOomScoreAdj: boolean;
  /**
   * kubelet `failCgroupV1: false`: kubelet 1.36 refuses a cgroup v1 hierarchy unless told
   * otherwise; a development machine may still have one. The VM (Debian 13) is cgroup v2 only,
   * so kubelet keeps refusing v1 there.
   */
  readonly allowCgroupV1: boolean;
  /**
   * kubelet `failSwapOn: false`: development machines commonly have swap on; a VM has none, and
   * kubelet keeps failing if it ever had.
   */
  readonly allowSwap: boolean;
  /**
   * kubelet `port: 0` and `healthzPort: 0`: the local node asks for none of kubelet's own TCP
   * ports (a developer machine may run a kubelet of its own on 10250/10248; healthzPort 0
   * turns the healthz server off). A VM's kubelet keeps its defaults on loopback.
   */
  readonly kubeletPortsOff: boolean;
  /**
   * kubelet enforces Node Allocatable across Pods in per-QoS cgroups (the spec: reservations
   * protect the node's health). A local node shares the machine with the developer's own
   * processes and does not own a cgroup subtree, so it reserves nothing in cgroups
   * (`cgroupsPerQOS: false`, `enforceNodeAllocatable: []`); the figures still shape Allocatable.
   */
  readonly enforceNodeAllocatable: boolean;
  /**
   * kubelet `--hostname-override`: several local nodes (one per cluster and NodeGroup) share one
   * machine's host name, so each local node names itself after its node root. A VM's node name
   * is its own host name.
   */
  readonly hostnameOverride: boolean;
}

/** The AWS VM and the local node, difference by difference (see {@link NodeProfile}). */
export const NODE_PROFILES: Readonly<Record<NodeProfileName, NodeProfile>> = Object.freeze({
  aws: Object.freeze({
    runtime: 'runsc',
    cgroupDriver: 'systemd',
    restrictOomScoreAdj: false,
    allowCgroupV1: false,
    allowSwap: false,
    kubeletPortsOff: false,
    enforceNodeAllocatable: true,
    hostnameOverride: false,
  }),
  local: Object.freeze({
    runtime: 'runc',
    cgroupDriver: 'cgroupfs',
    restrictOomScoreAdj: true,
    allowCgroupV1: true,
    allowSwap: true,
    kubeletPortsOff: true,
    enforceNodeAllocatable: false,
    hostnameOverride: true,
  }),
});
