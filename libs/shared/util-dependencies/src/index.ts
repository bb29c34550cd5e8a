/** The dependency catalog as data, architectures, object keys and template expansion. */
export * from './catalog';
/** Debian package versions (dpkg ordering) and strict `Packages` index parsing. */
export * from './debian';
/** Version acceptance (prereleases and other majors rejected) and ordering. */
export * from './versions';
/** Publisher checksum file parsing. */
export * from './checksums';
/** `dependencies/manifest.json`: types, strict parser, canonical serializer, object keys. */
export * from './manifest';
/** Pure retention planning over a `dependencies/` listing. */
export * from './retention';
/** Pure sync planning: what the published manifest does not already record. */
export * from './plan';
/** NAT64's Jool modules: the Debian image kernel and the matching jool-builds archive. */
export * from './jool';
