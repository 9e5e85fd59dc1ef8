package opac

import (
	"embed"

	"github.com/stacks-ils/stacks/kit"
)

// The patrons' site's own assets: its stylesheet and icon, nothing else (no
// script: every page works without JavaScript).
//
//go:embed static
var staticFS embed.FS

// static serves the patrons' site's embedded assets (kit.Static).
var static = kit.NewStatic(staticFS, "static")

// staticURL returns the cache-busting URL of an embedded asset.
func staticURL(name string) string { return static.URL(name) }
