import semver from 'semver';
import { PodminError } from '@podmin/util-errors';
import {
  imageMirrorPath,
  selectGreatest,
  type DesiredImage,
  type ImageDependency,
} from '@podmin/util-dependencies';
import { trimSlashes } from './release-endpoints';
import { badListing, type UpstreamHttp } from './upstream-http';

/**
 * A catalog image at its greatest acceptable tag in its registry's tag list (`/v2/<repo>/tags/
 * list` under `registries[host]`); its digest comes later, from the image port.
 */
export async function resolveImage(
  http: UpstreamHttp,
  registries: Readonly<Record<string, string>>,
  image: ImageDependency,
): Promise<DesiredImage> {
  const base = registries[image.registry];
  if (base === undefined) {
    throw new PodminError(
      'INTERNAL',
      `resolving image ${image.name}: no endpoint for ${image.registry}`,
    );
  }
  const url = `${trimSlashes(base)}/v2/${image.repository}/tags/list`;
  const { json } = await http.listing(url);
  const tags = readTagList(json, url);
  // Registries tag releases loosely (`3.10` and `3.10.1`); compare as coerced versions and
  // prefer the tag that spells out its patch when two coerce equally.
  const candidates = tags
    .filter((t) => /^\d+\.\d+(?:\.\d+)?$/.test(t))
    .sort((a, b) => b.length - a.length);
  const chosen = selectGreatest(candidates, (t) => semver.coerce(t)?.version ?? '', image.pin);
  if (chosen === undefined) {
    throw new PodminError(
      'NOT_FOUND',
      `resolving image ${image.name}: no ${image.pin.major}.x tag at ${url}`,
      { fault: 'system' },
    );
  }
  return {
    name: image.name,
    version: chosen,
    source: `${image.registry}/${image.repository}:${chosen}`,
    path: imageMirrorPath(image),
  };
}

function readTagList(json: unknown, url: string): string[] {
  const tags = (json as Record<string, unknown> | null)?.['tags'];
  if (!Array.isArray(tags)) throw badListing(url, 'expected {"tags": [...]}');
  return tags.filter((t): t is string => typeof t === 'string');
}
