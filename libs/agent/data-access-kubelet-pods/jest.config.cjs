module.exports = {
  displayName: 'agent-data-access-kubelet-pods',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
