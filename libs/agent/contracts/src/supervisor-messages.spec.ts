import { isChildMessage, isSupervisorMessage } from './supervisor-messages';

describe('isChildMessage', () => {
  it('accepts exactly the typed messages', () => {
    expect(isChildMessage({ type: 'ready' })).toBe(true);
    expect(isChildMessage({ type: 'health', healthy: true })).toBe(true);
    expect(isChildMessage({ type: 'health', healthy: false, detail: 'index unreachable' })).toBe(
      true,
    );
  });

  it.each([
    null,
    'ready',
    { type: 'ready', extra: 1 },
    { type: 'health' },
    { type: 'health', healthy: 'yes' },
    { type: 'health', healthy: false, detail: 3 },
    { type: 'health', healthy: false, pid: 3 },
    { type: 'exit' },
  ])('refuses %p', (message) => {
    expect(isChildMessage(message)).toBe(false);
  });
});

describe('isSupervisorMessage', () => {
  it('accepts exactly the stop message', () => {
    expect(isSupervisorMessage({ type: 'stop' })).toBe(true);
  });

  it.each([null, 'stop', { type: 'stop', now: true }, { type: 'ready' }, { type: 'exit' }])(
    'refuses %p',
    (message) => {
      expect(isSupervisorMessage(message)).toBe(false);
    },
  );
});
