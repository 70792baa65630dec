// The JavaScript harness's reconciliation against the cases the Java load generator is held to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reconcile } from '../bench/reconcile.js';

const cases = JSON.parse(readFileSync(fileURLToPath(new URL('../../../load-tests/reconcile-cases.json', import.meta.url)), 'utf8')).cases;

test('the shared cases are there', () => assert.ok(cases.length >= 4));

for (const c of cases) {
  test(`shared case: ${c.name}`, () => {
    const sets = (o) => new Map(Object.entries(o).map(([k, v]) => [k, new Set(v)]));
    const v = reconcile(c.accepted, sets(c.history), sets(c.held), c.received);
    assert.equal(v.accepted, c.expect.accepted);
    assert.equal(v.expectedDeliveries, c.expect.expectedDeliveries);
    assert.equal(v.duplicatesSeen, c.expect.duplicatesSeen);
    assert.deepEqual(v.lost, c.expect.lost);
    assert.equal(v.clean, c.expect.lost.length === 0);
  });
}
