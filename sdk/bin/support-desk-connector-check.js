#!/usr/bin/env node
// The `support-desk-connector-check` command (docs/conformance.md): runs the compiled CLI. A
// committed file rather than dist/check/cli.js itself, because npm links a package's commands
// before it builds it (`prepare`), and skips a command whose file does not exist yet: in a
// checkout of this repository, `npm install` would otherwise leave `npx support-desk-connector-check`
// unlinked.
import '../dist/check/cli.js';
