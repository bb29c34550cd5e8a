import { DutyGate } from './duty-gate';
import type { LeadershipSource, LeadershipTerm } from './election.ports';

/** A hand-set leadership source: the test says which term holds and until when. */
class SetLeadership implements LeadershipSource {
  now = 0;
  term: { term: number; until: number; controller: AbortController } | undefined;

  lead(term: number, until: number): void {
    this.term = { term, until, controller: new AbortController() };
  }

  end(): void {
    this.term?.controller.abort();
    this.term = undefined;
  }

  currentTerm(): LeadershipTerm | undefined {
    return this.term === undefined
      ? undefined
      : { term: this.term.term, signal: this.term.controller.signal };
  }

  holds(term: number): boolean {
    return this.term?.term === term && this.now < this.term.until;
  }
}

describe('DutyGate', () => {
  it('issues no token to a follower', () => {
    expect(new DutyGate(new SetLeadership()).current()).toBeUndefined();
  });

  it('issues a token valid only while its term holds, judged at each check', () => {
    const source = new SetLeadership();
    const gate = new DutyGate(source);
    source.lead(1, 25_000);
    const token = gate.current()!;
    expect(token.term).toBe(1);
    expect(token.valid()).toBe(true);
    expect(() => token.assertValid('rotating the workload CA')).not.toThrow();

    source.now = 25_000; // deadline passed, nobody told the gate
    expect(token.valid()).toBe(false);
    expect(gate.current()).toBeUndefined();
    expect(() => token.assertValid('rotating the workload CA')).toThrow(
      'rotating the workload CA: this node is no longer the leader (term 1 ended)',
    );
  });

  it('never lets an old term’s token write in a later term', () => {
    const source = new SetLeadership();
    const gate = new DutyGate(source);
    source.lead(1, 10_000);
    const first = gate.current()!;
    source.end();
    expect(first.signal.aborted).toBe(true);
    source.lead(2, 20_000);
    expect(first.valid()).toBe(false);
    const second = gate.current()!;
    expect(second.term).toBe(2);
    expect(second.valid()).toBe(true);
    let caught: unknown;
    try {
      first.assertValid('writing dns/services.pb');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'PRECONDITION_FAILED' });
  });
});
