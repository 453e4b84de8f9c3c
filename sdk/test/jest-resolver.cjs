/**
 * Jest resolver for the SDK's NodeNext-style imports. The sources import siblings as `./x.js`
 * (what Node needs for the emitted ESM), but under Jest only `./x.ts` exists. This tries the
 * default resolution first and, only if that fails for a relative `.js` request outside
 * node_modules, retries with `.ts` — so it cannot change how anything that resolves today resolves.
 */
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (error) {
    if (/^\.{1,2}\/.*\.js$/.test(request) && !/[\\/]node_modules[\\/]/.test(options.basedir)) {
      return options.defaultResolver(`${request.slice(0, -3)}.ts`, options);
    }
    throw error;
  }
};
