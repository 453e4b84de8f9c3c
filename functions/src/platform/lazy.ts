/**
 * A function's handler, loaded on the function's first invocation instead of when index.js loads.
 *
 * Why: every instance of every function loads the whole entry point (so does the Firebase CLI, to
 * discover the functions). With static imports there, an instance of `claimDelivery` would also
 * load the messages handler (busboy, image inspection, storage) and the triggers' code, and each
 * trigger would load the HTTP pipeline. `load` runs once per instance: after that the cached
 * handler is called directly. `load` is synchronous (`require`), so concurrent first requests
 * cannot start two loads, and a module that throws while loading is not cached by Node: the next
 * invocation tries again instead of failing forever.
 */
export function lazy<H extends (...args: never[]) => unknown>(load: () => H): H {
  let handler: H | undefined;
  // The wrapper has H's parameters and result by construction; TypeScript cannot express that
  // for a generic H, hence the cast.
  return ((...args: Parameters<H>) => (handler ??= load())(...args)) as H;
}
