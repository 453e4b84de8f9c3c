// Stand-in for `re2`: the root package.json's `overrides` give superstatic `"re2": "$re2"`, the
// root devDependency `"re2": "file:./stubs/re2"`, so node_modules/re2 links to this folder.
//
// Why: re2 is an optional dependency of superstatic (the Hosting emulator's server, via
// firebase-tools). No prebuilt binary of it is reachable here, so `npm install` compiled it from
// source with node-gyp: minutes of a fresh install, for a module this project never needs.
// superstatic loads it inside try/catch (lib/utils/patterns.js) and uses it only for `regex`
// rewrites, redirects and headers, falling back to JavaScript's RegExp; firebase.json's rewrites
// are `source` globs (minimatch). npm cannot drop a single optional dependency (`--omit=optional`
// would also drop esbuild's platform binary), hence a package whose loading fails exactly as a
// missing module's does. (The override is a `$` reference to a root dependency because npm
// resolves a `file:` path written in `overrides` against the overridden package's folder.)
//
// Should firebase.json ever use `regex` rewrites: RegExp differs from RE2 in corner cases
// (backtracking, some syntax); delete the override, the devDependency and this folder to get
// the real re2 back.
const error = new Error("Cannot find module 're2' (stubs/re2 stands in for it: see stubs/re2/index.js)");
error.code = 'MODULE_NOT_FOUND';
throw error;
