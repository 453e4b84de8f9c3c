/**
 * A small evaluator for the subset of the Cloud Logging query language that monitoring/ uses, so
 * that a test can run every metric's and alert's filter against the log lines the integration
 * tests captured (docs/operations.md#monitoring). The subset:
 *
 *   expression := term { ["AND"] term | "OR" term }     (AND binds tighter than OR; juxtaposition is AND)
 *   term       := "NOT" term | "(" expression ")" | comparison
 *   comparison := field op value
 *   field      := severity | trace | spanId | jsonPayload.<name>{.<name>}   (a name may be "quoted")
 *   op         := = | != | > | >= | < | <= | :                              (":" has the value as a substring)
 *   value      := "string" | number | bareword | "(" value { "OR" value } ")"
 *
 * As in Cloud Logging: a comparison on a missing field is false (and `!=` is then false too,
 * except under NOT); numbers compare numerically when both sides are numbers; severity compares
 * by its order (DEFAULT < DEBUG < INFO < NOTICE < WARNING < ERROR < CRITICAL < ALERT < EMERGENCY).
 * Anything outside the subset throws, so a filter using more than this fails the test loudly.
 *
 * Also `logEntryOf`: a structured line as firebase-functions prints it -> the LogEntry Cloud
 * Logging makes of it (`severity` and the trace fields leave the payload, the rest is jsonPayload).
 */

export interface LogEntry {
  severity: string;
  trace?: string;
  spanId?: string;
  jsonPayload: Record<string, unknown>;
}

const SEVERITIES = ['DEFAULT', 'DEBUG', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'CRITICAL', 'ALERT', 'EMERGENCY'];

/** The LogEntry Cloud Logging makes of one structured stdout line. */
export function logEntryOf(line: Record<string, unknown>): LogEntry {
  const { severity, 'logging.googleapis.com/trace': trace, 'logging.googleapis.com/spanId': spanId, ...jsonPayload } = line;
  const entry: LogEntry = { severity: typeof severity === 'string' ? severity : 'DEFAULT', jsonPayload };
  if (typeof trace === 'string') entry.trace = trace;
  if (typeof spanId === 'string') entry.spanId = spanId;
  return entry;
}

type Token = { kind: 'word' | 'string' | 'op' | 'paren'; text: string };

function tokenize(filter: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < filter.length) {
    const c = filter[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: 'paren', text: c });
      i++;
    } else if (c === '"') {
      let text = '';
      i++;
      while (i < filter.length && filter[i] !== '"') {
        if (filter[i] === '\\') i++;
        text += filter[i] ?? '';
        i++;
      }
      if (i >= filter.length) throw new Error(`unterminated string in filter: ${filter}`);
      i++;
      tokens.push({ kind: 'string', text });
    } else if ('=!<>:'.includes(c)) {
      const two = filter.slice(i, i + 2);
      const op = ['!=', '>=', '<='].includes(two) ? two : c;
      if (op === '!') throw new Error(`unsupported operator at ${i} in: ${filter}`);
      tokens.push({ kind: 'op', text: op });
      i += op.length;
    } else {
      const match = /^[A-Za-z0-9_.\-/@]+/.exec(filter.slice(i));
      if (match === null) throw new Error(`unsupported character '${c}' at ${i} in: ${filter}`);
      tokens.push({ kind: 'word', text: match[0] });
      i += match[0].length;
    }
  }
  return tokens;
}

type Node =
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'not'; operand: Node }
  | { kind: 'cmp'; field: string[]; op: string; values: Array<string | number> };

/** Parses a filter of the subset (throws on anything else). */
export function parseFilter(filter: string): Node {
  const tokens = tokenize(filter);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const next = (): Token => {
    const t = tokens[pos++];
    if (t === undefined) throw new Error(`unexpected end of filter: ${filter}`);
    return t;
  };
  const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.text === w;

  const value = (t: Token): string | number => (t.kind === 'word' && /^-?\d+(\.\d+)?$/.test(t.text) ? Number(t.text) : t.text);
  const values = (): Array<string | number> => {
    const t = next();
    if (t.kind === 'paren' && t.text === '(') {
      const list = [value(next())];
      while (isWord(peek(), 'OR')) {
        pos++;
        list.push(value(next()));
      }
      const close = next();
      if (close.text !== ')') throw new Error(`expected ) in value list of: ${filter}`);
      return list;
    }
    if (t.kind === 'op' || t.kind === 'paren') throw new Error(`expected a value in: ${filter}`);
    return [value(t)];
  };
  const field = (t: Token): string[] => {
    if (t.kind !== 'word') throw new Error(`expected a field, got '${t.text}' in: ${filter}`);
    const path = t.text.split('.');
    const root = path[0];
    if (root === 'jsonPayload' && path.length > 1) return path;
    if ((root === 'severity' || root === 'trace' || root === 'spanId') && path.length === 1) return path;
    throw new Error(`field '${t.text}' is outside the supported subset in: ${filter}`);
  };
  const term = (): Node => {
    const t = next();
    if (isWord(t, 'NOT')) return { kind: 'not', operand: term() };
    if (t.kind === 'paren' && t.text === '(') {
      const inner = expression();
      if (next().text !== ')') throw new Error(`expected ) in: ${filter}`);
      return inner;
    }
    const path = field(t);
    const op = next();
    if (op.kind !== 'op') throw new Error(`expected an operator after ${path.join('.')} in: ${filter}`);
    return { kind: 'cmp', field: path, op: op.text, values: values() };
  };
  const conjunction = (): Node => {
    let left = term();
    for (;;) {
      const t = peek();
      if (t === undefined || isWord(t, 'OR') || (t.kind === 'paren' && t.text === ')')) return left;
      if (isWord(t, 'AND')) pos++;
      left = { kind: 'and', left, right: term() };
    }
  };
  const expression = (): Node => {
    let left = conjunction();
    while (isWord(peek(), 'OR')) {
      pos++;
      left = { kind: 'or', left, right: conjunction() };
    }
    return left;
  };
  const tree = expression();
  if (pos !== tokens.length) throw new Error(`unexpected '${tokens[pos]?.text}' in: ${filter}`);
  return tree;
}

function lookup(entry: LogEntry, path: string[]): unknown {
  if (path[0] !== 'jsonPayload') return (entry as unknown as Record<string, unknown>)[path[0] as string];
  let value: unknown = entry.jsonPayload;
  for (const key of path.slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function compare(actual: unknown, op: string, expected: string | number, isSeverity: boolean): boolean {
  if (actual === undefined || actual === null) return false;
  if (op === ':') return String(actual).includes(String(expected));
  let a: string | number = typeof actual === 'number' ? actual : String(actual);
  let e: string | number = expected;
  if (isSeverity) {
    a = SEVERITIES.indexOf(String(actual).toUpperCase());
    e = SEVERITIES.indexOf(String(expected).toUpperCase());
  } else if (typeof a === 'number' || typeof e === 'number') {
    a = Number(a);
    e = Number(e);
    if (Number.isNaN(a) || Number.isNaN(e)) return false;
  }
  switch (op) {
    case '=':
      return a === e;
    case '!=':
      return a !== e;
    case '>':
      return a > e;
    case '>=':
      return a >= e;
    case '<':
      return a < e;
    case '<=':
      return a <= e;
    default:
      throw new Error(`unsupported operator ${op}`);
  }
}

function evaluate(node: Node, entry: LogEntry): boolean {
  switch (node.kind) {
    case 'and':
      return evaluate(node.left, entry) && evaluate(node.right, entry);
    case 'or':
      return evaluate(node.left, entry) || evaluate(node.right, entry);
    case 'not':
      return !evaluate(node.operand, entry);
    case 'cmp': {
      const actual = lookup(entry, node.field);
      const isSeverity = node.field[0] === 'severity';
      // A value list means "equal to any of them" (for !=: "none of them").
      if (node.op === '!=') return actual !== undefined && node.values.every((v) => compare(actual, '!=', v, isSeverity));
      return node.values.some((v) => compare(actual, node.op, v, isSeverity));
    }
  }
}

/** Whether `entry` matches `filter` (the subset above). */
export function matches(filter: string, entry: LogEntry): boolean {
  return evaluate(parseFilter(filter), entry);
}

/**
 * The value of a metric's `EXTRACT(jsonPayload.x)` label or value extractor for `entry` (as a
 * string, as Cloud Logging extracts labels), or undefined when the field is absent.
 */
export function extract(extractor: string, entry: LogEntry): string | undefined {
  const match = /^EXTRACT\(([A-Za-z0-9_.]+)\)$/.exec(extractor);
  if (match === null) throw new Error(`unsupported extractor ${extractor}`);
  const value = lookup(entry, (match[1] as string).split('.'));
  return value === undefined || value === null ? undefined : String(value);
}

/**
 * The label restrictions of a Monitoring filter on a log-based metric (`metric.label.k="v"`,
 * `metric.label.k!="v"`, `metric.label.k=("a" OR "b")`), as a predicate on extracted labels; the
 * `metric.type` clause names the metric. Anything else throws.
 */
export function metricCondition(filter: string): { metric: string; labels: (labels: Record<string, string | undefined>) => boolean } {
  const clauses = filter.split(/\s+AND\s+/);
  let metric: string | undefined;
  const checks: Array<(labels: Record<string, string | undefined>) => boolean> = [];
  for (const clause of clauses) {
    const type = /^metric\.type="logging\.googleapis\.com\/user\/([A-Za-z0-9_]+)"$/.exec(clause.trim());
    if (type !== null) {
      metric = type[1];
      continue;
    }
    const label = /^metric\.label\.([A-Za-z0-9_]+)(!=|=)(.+)$/.exec(clause.trim());
    if (label === null) throw new Error(`unsupported clause '${clause}' in: ${filter}`);
    const [, key, op, raw] = label as unknown as [string, string, string, string];
    const list = raw.startsWith('(') ? raw.slice(1, -1).split(/\s+OR\s+/) : [raw];
    const wanted = list.map((v) => JSON.parse(v.trim()) as string);
    checks.push((labels) => {
      const v = labels[key];
      if (v === undefined) return false;
      return op === '=' ? wanted.includes(v) : !wanted.includes(v);
    });
  }
  if (metric === undefined) throw new Error(`no metric.type in: ${filter}`);
  return { metric, labels: (labels) => checks.every((c) => c(labels)) };
}
