import { JsonLogger } from './json-logger';

describe('JsonLogger', () => {
  it('writes one JSON object per line with fields, filtered by level', () => {
    const lines: string[] = [];
    const logger = new JsonLogger({
      write: (l) => lines.push(l),
      now: () => new Date(0),
      service: 'agent-registry',
      level: 'info',
    });
    logger.event('info', 'listen', { port: 5000 });
    logger.event('debug', 'hidden');
    logger.error('boom', 'stack-text', 'Ctx');
    expect(lines.every((l) => l.endsWith('\n'))).toBe(true);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        time: '1970-01-01T00:00:00.000Z',
        level: 'info',
        service: 'agent-registry',
        msg: 'listen',
        port: 5000,
      },
      {
        time: '1970-01-01T00:00:00.000Z',
        level: 'error',
        service: 'agent-registry',
        msg: 'boom',
        context: 'Ctx',
        stack: 'stack-text',
      },
    ]);
  });
});
