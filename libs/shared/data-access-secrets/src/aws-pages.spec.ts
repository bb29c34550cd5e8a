import { collectNamePages } from './aws-pages';

describe('collectNamePages', () => {
  it('follows every token, then returns each name once, sorted', async () => {
    const pages: Record<string, { names: string[]; nextToken: string | undefined }> = {
      first: { names: ['/c/b', '/c/a'], nextToken: 't1' },
      t1: { names: ['/c/a', '/c/d'], nextToken: 't2' },
      t2: { names: [], nextToken: undefined },
    };
    const asked: (string | undefined)[] = [];
    const names = await collectNamePages((token) => {
      asked.push(token);
      return Promise.resolve(pages[token ?? 'first'] ?? { names: [], nextToken: undefined });
    });
    expect(asked).toEqual([undefined, 't1', 't2']);
    expect(names).toEqual(['/c/a', '/c/b', '/c/d']);
  });
});
