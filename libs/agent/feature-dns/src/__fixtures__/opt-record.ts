import type { OptAnswer } from 'dns-packet';

/** An EDNS(0) OPT record as a client sends it (version 0, DO clear, no options), with `overrides`. */
export function optRecord(overrides: Partial<OptAnswer> = {}): OptAnswer {
  return {
    type: 'OPT',
    name: '.',
    udpPayloadSize: 4096,
    extendedRcode: 0,
    ednsVersion: 0,
    flags: 0,
    flag_do: false,
    options: [],
    ...overrides,
  };
}
