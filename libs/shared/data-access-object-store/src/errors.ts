import { PodminError } from '@podmin/util-errors';

/** Raised by a bounded read when the object is larger than the bound. */
export class ObjectTooLargeError extends PodminError {
  constructor(doing: string, limit: number, size?: number) {
    super(
      'OBJECT_TOO_LARGE',
      size === undefined
        ? `${doing}: object is larger than the ${limit}-byte read limit`
        : `${doing}: object is ${size} bytes, over the ${limit}-byte read limit`,
    );
  }
}

/** Describes an object for error messages: `object "key" in <where>`. */
export function describeObject(key: string, where: string): string {
  return `object ${JSON.stringify(key)} in ${where}`;
}
