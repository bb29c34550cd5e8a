module.exports = {
  displayName: 'agent-registry',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
