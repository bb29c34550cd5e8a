import { closestName, editDistance } from './suggest';

const COMMANDS = ['connect', 'use', 'disconnect', 'deploy', 'list', 'status', 'delete', 'history'];

describe('editDistance', () => {
  it('counts a swap of adjacent characters as one edit', () => {
    expect(editDistance('stauts', 'status')).toBe(1);
    expect(editDistance('sttaus', 'status')).toBe(1);
  });

  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('', 'use')).toBe(3);
    expect(editDistance('deplyo', 'deploy')).toBe(1);
    expect(editDistance('deplo', 'deploy')).toBe(1);
    expect(editDistance('dpeloyy', 'deploy')).toBe(2);
    expect(editDistance('list', 'lust')).toBe(1);
    expect(editDistance('trust', 'list')).toBe(3);
    expect(editDistance('status', 'status')).toBe(0);
  });
});

describe('closestName', () => {
  it('suggests the command a typo was meant to be', () => {
    expect(closestName('stauts', COMMANDS)).toBe('status');
    expect(closestName('delpoy', COMMANDS)).toBe('deploy');
    expect(closestName('Lsit', COMMANDS)).toBe('list');
    expect(closestName('histroy', COMMANDS)).toBe('history');
  });

  it('suggests nothing for a word that is no near miss', () => {
    expect(closestName('trust', COMMANDS)).toBeUndefined();
    expect(closestName('kubectl', COMMANDS)).toBeUndefined();
    // Short words allow one edit only: "ls" is two from "use".
    expect(closestName('ls', COMMANDS)).toBeUndefined();
  });

  it('prefers the nearest candidate, then the first listed', () => {
    expect(closestName('delte', COMMANDS)).toBe('delete');
    expect(closestName('ab', ['ax', 'ay'])).toBe('ax');
    expect(closestName('lisst', ['lit', 'list'])).toBe('list');
  });

  it('honours an explicit maximum distance', () => {
    expect(closestName('dpeloyy', COMMANDS, 1)).toBeUndefined();
    expect(closestName('dpeloyy', COMMANDS, 2)).toBe('deploy');
  });
});
