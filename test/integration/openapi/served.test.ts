/**
 * The OpenAPI document is served read-only by Hosting at `{base}/openapi.yaml`, byte for byte the
 * committed openapi/openapi.yaml (test/unit/openapi/document.test.ts checks that it equals a fresh build).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { OPENAPI_FILE } from '../helpers/openapi';
import { apiBaseUrl } from '../helpers/stack';

test('GET {base}/openapi.yaml serves the committed document', async () => {
  const res = await fetch(`${apiBaseUrl()}/openapi.yaml`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/yaml/);
  const text = await res.text();
  expect(text).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  expect((parse(text) as { info: { version: string } }).info.version).toBe('1.0.0');
});

test('it is static: a write does not change what is served', async () => {
  await fetch(`${apiBaseUrl()}/openapi.yaml`, { method: 'PUT', body: 'x' });
  const after = await fetch(`${apiBaseUrl()}/openapi.yaml`);
  expect(await after.text()).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
});
