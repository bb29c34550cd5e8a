// Pattern sources shared by the index's parser and its canonical-text editor (not exported by
// the package): one definition, so both accept exactly the same keys.

/** A DNS-1123 label of at most 63 characters, without anchors or captures. */
export const DNS_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
