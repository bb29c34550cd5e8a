module.exports = {
  displayName: 'cli-feature-local-node',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
