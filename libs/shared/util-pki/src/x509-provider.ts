// @peculiar/x509 resolves its dependency container through tsyringe, which needs the Reflect
// metadata polyfill loaded first; node's WebCrypto (Ed25519 included) is its crypto provider.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

/** The @peculiar/x509 namespace with node's WebCrypto installed as its provider (internal). */
export { x509 };
