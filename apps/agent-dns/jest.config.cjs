module.exports = {
  displayName: 'agent-dns',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
