/** One page of an AWS listing: the names it holds that match, and the next page's token. */
export interface NamePage {
  names: readonly string[];
  nextToken: string | undefined;
}

/** Every name of a paginated AWS listing, fetched page by page, each once, sorted. */
export async function collectNamePages(
  fetchPage: (token: string | undefined) => Promise<NamePage>,
): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await fetchPage(token);
    names.push(...page.names);
    token = page.nextToken;
  } while (token);
  return [...new Set(names)].sort();
}
