/**
 * docs/architecture.md describes the layout; this keeps it true. Every path it names (in the
 * Layout block, and in backticks anywhere) must exist, and every folder of functions/src must be
 * described in the Layout block.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
const TOP_LEVEL = ['functions/', 'sdk/', 'test/', 'scripts/', 'bench/', 'docs/', 'openapi/', 'examples/'];
/** Generated or installed, so absent from a fresh clone. */
const GENERATED = ['functions/lib/', 'sdk/dist/', 'node_modules/'];

/** The paths the Layout block names: top-level lines, and indented file lists under the last folder. */
function layoutPaths(): string[] {
  const block = /## Layout\n[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md has no Layout code block');
  const paths: string[] = [];
  let folder = '';
  for (const line of block.split('\n')) {
    if (line.trim() === '') continue;
    const indented = /^\s{2}\S/.test(line) && !/^\s{5,}/.test(line);
    const names = line.trim().split(/\s{2,}/)[0] ?? '';
    if (!indented && /^\S/.test(line)) {
      paths.push(names);
      if (names.endsWith('/')) folder = names;
    } else if (indented) {
      for (const name of names.split(',').map((n) => n.trim())) paths.push(folder + name);
    }
  }
  return paths;
}

/** Repository paths in backticks anywhere in the document (no placeholders, nothing generated). */
function backtickedPaths(): string[] {
  return [...doc.matchAll(/`([A-Za-z0-9_./-]+)`/g)]
    .map((m) => m[1] ?? '')
    .filter((p) => TOP_LEVEL.some((top) => p.startsWith(top)) && !GENERATED.some((g) => p.startsWith(g)));
}

describe('docs/architecture.md', () => {
  const named = layoutPaths();

  test('the Layout block names the feature folders and their files', () => {
    expect(named).toEqual(expect.arrayContaining(['functions/src/platform/', 'functions/src/messages/', 'functions/src/deliveries/', 'functions/src/integrations/']));
    expect(named).toContain('functions/src/deliveries/transition.ts');
  });

  test.each([...new Set([...named, ...backtickedPaths()])])('%s exists', (path) => {
    expect(existsSync(join(ROOT, path))).toBe(true);
  });

  test('every folder of functions/src is in the Layout block', () => {
    const src = join(ROOT, 'functions', 'src');
    const folders = readdirSync(src).filter((f) => statSync(join(src, f)).isDirectory());
    for (const folder of folders) expect(named).toContain(`functions/src/${folder}/`);
  });
});
