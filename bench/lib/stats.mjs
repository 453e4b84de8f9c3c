/** Small statistics helpers: every reported figure is a summary over repetitions. */

/** Linear-interpolated quantile of an unsorted array (q in [0, 1]). */
function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

/** The `q` percentile of `values` as one of them (nearest rank, no interpolation): p95 figures; NaN when empty. */
export const percentileOf = (values, q) => (values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]);

/** `{ median, p25, p75, min, max, n }` of the per-repetition values (rounded for the report). */
export function summarize(values, digits = 3) {
  const round = (x) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : null);
  return {
    median: round(median(values)),
    p25: round(quantile(values, 0.25)),
    p75: round(quantile(values, 0.75)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    n: values.length,
  };
}

/** Element-wise per-repetition values of f(a[i], b[i], ...). */
export const zipWith = (f, ...arrays) => arrays[0].map((_, i) => f(...arrays.map((a) => a[i])));


export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn(item)` over `items` with at most `limit` in flight; resolves to the results in order. */
export async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
