// Child process of the local store's cross-process race test. It loads the library from a
// CommonJS bundle the test builds with esbuild (jest's TypeScript transform does not reach
// child processes) and increments a JSON counter by compare-and-swap, rereading on conflict.
// Usage: node counter-race-child.cjs <bundle.cjs> <bucket-dir> <key> <increments>
'use strict';

const [bundlePath, bucketDir, key, increments] = process.argv.slice(2);
const { LocalDirectoryObjectStore } = require(bundlePath);

async function main() {
  const store = new LocalDirectoryObjectStore(bucketDir);
  let conflicts = 0;
  for (let done = 0; done < Number(increments);) {
    const current = await store.get(key);
    const value = JSON.parse(current.body.toString('utf8'));
    try {
      await store.putIfMatch(key, JSON.stringify({ n: value.n + 1 }), current.etag);
      done++;
    } catch (err) {
      if (!err || err.code !== 'PRECONDITION_FAILED') {
        throw err;
      }
      conflicts++;
    }
  }
  process.stdout.write(JSON.stringify({ conflicts }));
}

main().catch((err) => {
  process.stderr.write(`${(err && err.stack) || err}\n`);
  process.exitCode = 1;
});
