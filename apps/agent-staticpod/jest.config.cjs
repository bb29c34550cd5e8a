module.exports = {
  displayName: 'agent-staticpod',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
