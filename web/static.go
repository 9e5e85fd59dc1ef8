package web

import (
	"embed"

	"github.com/stacks-ils/stacks/kit"
)

//go:embed static
var staticFS embed.FS

// static serves the staff site's embedded assets (kit.Static).
var static = kit.NewStatic(staticFS, "static")

// staticURL returns the cache-busting URL of an embedded asset.
func staticURL(name string) string { return static.URL(name) }

// htmxFile is htmx (2.0.11, BSD Zero Clause licence, from npm's htmx.org), which
// the desk script uses to send scans and swap their answers into the page.
const htmxFile = "htmx-2.0.11.min.js"

// htmxConfig is read by htmx at load: no eval and no inline styles (the CSP
// forbids both), and the desk's refusals (404, 409, 422) are answers to show,
// not errors; a server error or a time-out leaves the scan marked as failed.
const htmxConfig = `{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"historyEnabled":false,"timeout":20000,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"(404|409|422)","swap":true,"error":false},{"code":"[45]..","swap":false,"error":true}]}`
