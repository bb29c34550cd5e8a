/** The intended differences between an AWS VM's node configuration and a local node's. */
export * from './profiles';
/** Pure renderers for containerd, the registry hosts file, CNI, kubelet, crictl and CoreDNS. */
export * from './render';
