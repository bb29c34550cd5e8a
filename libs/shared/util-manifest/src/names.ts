import { isDnsLabel, isDnsSubdomain } from '@podmin/util-names';

const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** What a DNS-1123 label may look like, for error messages. */
export const DNS1123_LABEL_RULE =
  'a DNS-1123 label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit';

/** True when `value` is a DNS-1123 label (Kubernetes object names, namespaces, container names). */
export function isDns1123Label(value: string): boolean {
  return isDnsLabel(value);
}

/** True when `value` is a DNS-1123 subdomain (dot-separated DNS-1123 labels, at most 253 characters). */
export function isDns1123Subdomain(value: string): boolean {
  return isDnsSubdomain(value);
}

/** True when `value` is a Kubernetes qualified name (`[prefix/]name`), the form of label and annotation keys. */
export function isQualifiedName(value: string): boolean {
  const slash = value.indexOf('/');
  const name = slash === -1 ? value : value.slice(slash + 1);
  if (slash !== -1 && !isDns1123Subdomain(value.slice(0, slash))) {
    return false;
  }
  return name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}

/** True when `value` is a valid Kubernetes label value (empty, or a qualified-name part). */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && QUALIFIED_NAME_PART.test(value));
}
