/** DataplaneError. */
export * from './dataplane-error';
/** libbpf through FFI: its errors, BPF_ANY and the kernel's run-time statistics. */
export { BPF_ANY, LibbpfCallError, enableRunTimeStats } from './bpf/libbpf';
/** One map of the loaded object. */
export * from './bpf/bpf-map';
/** The eBPF object: load (after the map contract check), test-run, TCX links. */
export * from './bpf/bpf-object';
/** Ethernet/IPv6/TCP/UDP frames for BPF_PROG_TEST_RUN and their checksums. */
export * from './bpf/frames';
/** setns for the calling thread (BPF_PROG_TEST_RUN against a namespace's FIB). */
export * from './bpf/netns';
/** Byte layouts of the maps (shared with bpf/src/service_lb.c). */
export * from './maps/layout';
/** Snapshot → maps, by difference. */
export * from './maps/map-programmer';
/** Which interfaces the program belongs on. */
export * from './interfaces/interfaces';
/** The dataplane: load, program, attach, detach. */
export * from './dataplane';
/** The agent-dataplane process: module, Dataplane controller and definition. */
export * from './dataplane.process';
