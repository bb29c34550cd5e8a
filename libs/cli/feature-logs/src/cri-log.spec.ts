import { CriLineJoiner, criLines, parseCriLine } from './cri-log';

describe('CRI log lines', () => {
  it('parses time, stream, partial flag and text, keeping spaces in the text', () => {
    expect(parseCriLine('2026-12-03T13:15:10.002904803Z stderr F hello:  two  spaces ')).toEqual({
      time: '2026-12-03T13:15:10.002904803Z',
      timeMs: Date.parse('2026-12-03T13:15:10.002Z'),
      stream: 'stderr',
      partial: false,
      text: 'hello:  two  spaces ',
    });
    expect(parseCriLine('2026-12-03T13:15:10Z stdout F')?.text).toBe('');
  });

  it('skips lines not in the format', () => {
    expect(parseCriLine('plain text')).toBeUndefined();
    expect(parseCriLine('2026-12-03T13:15:10Z stdin F x')).toBeUndefined();
    expect(parseCriLine('not-a-time stdout F x')).toBeUndefined();
  });

  it('rejoins partial records per stream while the other stream interleaves', () => {
    const text = [
      '2026-12-03T10:00:00.1Z stdout P first ',
      '2026-12-03T10:00:00.2Z stderr F an error',
      '2026-12-03T10:00:00.3Z stdout P half ',
      '2026-12-03T10:00:00.4Z stdout F done',
      'garbage',
      '2026-12-03T10:00:00.5Z stdout F next',
      '',
    ].join('\n');
    expect(criLines(text).map((l) => [l.stream, l.text, l.time])).toEqual([
      ['stderr', 'an error', '2026-12-03T10:00:00.2Z'],
      ['stdout', 'first half done', '2026-12-03T10:00:00.1Z'],
      ['stdout', 'next', '2026-12-03T10:00:00.5Z'],
    ]);
  });

  it('returns a line whose end never came from flush', () => {
    const joiner = new CriLineJoiner();
    expect(joiner.push(parseCriLine('2026-12-03T10:00:00Z stdout P cut ')!)).toBeUndefined();
    expect(joiner.flush().map((l) => l.text)).toEqual(['cut ']);
    expect(joiner.flush()).toEqual([]);
  });
});
