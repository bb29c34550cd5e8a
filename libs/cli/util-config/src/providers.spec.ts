import { PodminError } from '@podmin/util-errors';
import { ProviderRegistry } from './providers';

describe('ProviderRegistry', () => {
  const registry = new ProviderRegistry({ aws: 1, local: 2 });

  it('turns a known name into its implementation and lists the names in order', () => {
    expect(registry.get('local')).toBe(2);
    expect(registry.names).toEqual(['aws', 'local']);
    expect(registry.has('aws')).toBe(true);
    expect(registry.has('gcp')).toBe(false);
  });

  it('refuses an unknown name with INVALID_ARGUMENT naming the known ones', () => {
    let caught: unknown;
    try {
      registry.get('gcp');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PodminError);
    expect((caught as PodminError).code).toBe('INVALID_ARGUMENT');
    expect((caught as PodminError).message).toBe(
      'choosing provider "gcp": unknown provider "gcp"; known providers: aws, local',
    );
  });
});
