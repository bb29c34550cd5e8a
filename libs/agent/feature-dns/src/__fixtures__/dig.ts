import { execFile } from 'node:child_process';

/** What one `dig` run printed, picked apart. */
export interface DigResult {
  stdout: string;
  status: string | undefined;
  flags: string[];
  /** Record lines of the ANSWER and AUTHORITY sections, whitespace collapsed. */
  answer: string[];
  authority: string[];
  /** The `udp:` size of the OPT pseudosection, when the reply had one. */
  ednsUdp: number | undefined;
}

/** Runs real `dig` against 127.0.0.1:`port` (one try, 2 s) and parses its output. */
export function dig(port: number, args: readonly string[]): Promise<DigResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'dig',
      ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=2', '+norecurse', ...args],
      { timeout: 20_000 },
      (err, stdout) => {
        if (err && err.code !== 9)
          return reject(new Error(`dig ${args.join(' ')}`, { cause: err }));
        const section = (title: string) => {
          const start = stdout.indexOf(`;; ${title} SECTION:\n`);
          if (start < 0) return [];
          const body = stdout.slice(start).split('\n').slice(1);
          const end = body.findIndex((line) => line.trim() === '');
          return body.slice(0, end < 0 ? undefined : end).map((l) => l.split(/\s+/).join(' '));
        };
        const udp = /; EDNS: version: \d+, flags:[^;]*; udp: (\d+)/.exec(stdout);
        resolve({
          stdout,
          status: /status: ([A-Z]+)/.exec(stdout)?.[1],
          flags: (/;; flags: ([a-z ]*);/.exec(stdout)?.[1] ?? '').split(' ').filter(Boolean),
          answer: section('ANSWER'),
          authority: section('AUTHORITY'),
          ednsUdp: udp ? Number(udp[1]) : undefined,
        });
      },
    );
  });
}
