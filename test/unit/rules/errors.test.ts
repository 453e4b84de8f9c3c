/**
 * functions/src/rules/errors.ts: every error class names itself with a literal, so `name`
 * (logged as `errorName`) survives bundling and minification, and maps to one HTTP status.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as errors from '../../../functions/src/rules/errors';

const classes = Object.entries(errors).filter(([, value]) => typeof value === 'function' && value.prototype instanceof errors.ApiError) as Array<
  [string, new (code: string, message: string, retryAfterSeconds: number) => errors.ApiError]
>;

describe('ApiError subclasses', () => {
  test('there is one per documented status', () => {
    expect(classes.map(([, Class]) => new Class('x', 'y', 1).status).sort()).toEqual([400, 401, 403, 404, 405, 409, 413, 415, 429, 503]);
  });

  test.each(classes)('%s: name is its export name, status and code as given', (exportName, Class) => {
    const error = new Class('some_code', 'a message', 7);
    expect(error.name).toBe(exportName);
    expect(error).toBeInstanceOf(errors.ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('some_code');
    expect(error.message).toBe('a message');
  });

  test('names are literals in the source, never derived from the class at run time', () => {
    const source = readFileSync(join(__dirname, '..', '..', '..', 'functions', 'src', 'rules', 'errors.ts'), 'utf8');
    expect(source).not.toMatch(/new\.target\.name|constructor\.name/);
    for (const [exportName] of classes) expect(source).toContain(`'${exportName}'`);
  });
});
