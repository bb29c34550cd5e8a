import { isRecord } from './checks';
import { ORIGIN_ANNOTATION, RECOGNIZED_ORIGINS } from './constants';

/** The Pod's `podmin.dev/origin` annotation when it names a recognised built-in install, else undefined. */
export function recognizedOrigin(pod: unknown): string | undefined {
  if (!isRecord(pod) || !isRecord(pod.metadata) || !isRecord(pod.metadata.annotations)) {
    return undefined;
  }
  const origin = pod.metadata.annotations[ORIGIN_ANNOTATION];
  return typeof origin === 'string' && RECOGNIZED_ORIGINS.includes(origin) ? origin : undefined;
}
