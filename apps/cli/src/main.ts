import { run } from './cli';

// The AWS SDK warns on every run about Node 20; podmin supports Node 20, so keep stderr clean.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
