module.exports = {
  displayName: 'agent-feature-staticpod',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
