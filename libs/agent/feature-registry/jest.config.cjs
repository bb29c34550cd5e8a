module.exports = {
  displayName: 'agent-feature-registry',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
