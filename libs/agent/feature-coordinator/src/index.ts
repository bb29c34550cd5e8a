/** The s3lect record `dns/leader.json`: Go-compatible parser and writer. */
export * from './election/leader-record';
/** Ports (with Nest-ready injection tokens) of the election. */
export * from './election/election.ports';
/** ElectionError. */
export * from './election/election-error';
/** The elector: s3lect-compatible, judged on local monotonic time. */
export * from './election/elector';
/** Tokens for leader-only duties. */
export * from './election/duty-gate';
/** System clocks and timer for the election ports. */
export * from './adapters/system-clocks';
