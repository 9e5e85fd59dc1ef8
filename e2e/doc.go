// Package e2e holds the end-to-end tests of Stacks. Each test starts the real
// stacks binary (built once by TestMain, or named by $STACKS_E2E_BIN) on a
// fresh demo database and drives it through Debian's Chromium with
// playwright-go, finding things the way a librarian does: by visible labels
// and button text, as the desk-session contract names them.
//
// The tests need Chromium at /usr/bin/chromium, the Playwright driver that
// playwright-go pins and axe-core (the accessibility checker TestAccessibility
// injects into every staff page, at the version axeCoreVersion pins);
// scripts/test-deps.sh installs them without any browser or CDN download, and
// `make test` or `make e2e` run it first. A missing browser, driver or
// axe-core fails the tests rather than skipping them, so CI cannot go green
// without having run them.
package e2e
