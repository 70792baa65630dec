// Runs before `npm test`: npm ci when a devDependency the tests need (the AsyncAPI parser of
// test/asyncapi.test.js) is missing or not the version package-lock.json pins, so that the tests
// run from a fresh clone. Silent when everything is in place.
import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const lock = JSON.parse(readFileSync(`${here}/package-lock.json`, 'utf8'));
const wanted = Object.keys(lock.packages[''].devDependencies ?? {});
const stale = wanted.filter((name) => {
  try {
    const have = JSON.parse(readFileSync(`${here}/node_modules/${name}/package.json`, 'utf8')).version;
    return have !== lock.packages[`node_modules/${name}`].version;
  } catch {
    return true;
  }
});
if (stale.length > 0) {
  console.error(`dev-deps: npm ci in ${here} (${stale.join(', ')} missing or not the locked version)`);
  execSync('npm ci --no-audit --no-fund --loglevel=error', { cwd: here, stdio: 'inherit' });
}
