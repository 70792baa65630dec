// docs/asyncapi.yaml, the WebSocket contract, parsed and validated as AsyncAPI 3.0 (no server needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';

const file = new URL('../../../docs/asyncapi.yaml', import.meta.url);

async function parsed(text) {
  return new Parser().parse(text, { source: file.pathname });
}

function describe(diagnostics) {
  return diagnostics.map((d) => `${d.code} at ${(d.path || []).join('.')}: ${d.message}`).join('\n');
}

test('docs/asyncapi.yaml is a valid AsyncAPI 3.0 document without a single error', async () => {
  const { document, diagnostics } = await parsed(await readFile(file, 'utf8'));
  const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
  assert.equal(errors.length, 0, describe(errors));
  assert.ok(document, 'the parser gave no document');
  assert.equal(document.version(), '3.0.0');
  assert.ok(document.channels().get('gateway'), 'the /ws channel is described');
  assert.equal(document.channels().get('gateway').address(), '/ws');
});

test('every frame of the description has a type field with one constant value', async () => {
  const { document, diagnostics } = await parsed(await readFile(file, 'utf8'));
  assert.ok(document, describe(diagnostics));
  const untyped = document.allMessages().all()
    .filter((m) => typeof m.payload()?.properties()?.type?.const() !== 'string')
    .map((m) => m.id());
  assert.deepEqual(untyped, []);
});

test('the check fails on a document that breaks the specification', async () => {
  // the same text with an operation that names no channel: the parser must report an error,
  // or the first test could not fail
  const text = (await readFile(file, 'utf8')).replace(
    /\n {2}receiveAck:\n {4}action: receive\n/, '\n  receiveAck:\n    action: listen\n');
  assert.notEqual(text, await readFile(file, 'utf8'), 'the document changed shape: update this test');
  const { diagnostics } = await parsed(text);
  assert.ok(diagnostics.some((d) => d.severity === DiagnosticSeverity.Error), 'an invalid action was not reported');
});
