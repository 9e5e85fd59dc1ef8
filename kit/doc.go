// Package kit holds the HTTP plumbing the staff site (package web) and the
// patrons' site (package opac) share: rendering a templ page, the one map from
// an error to a status and message, the middleware every answer goes through
// (Server-Timing, access log, panics, security headers, no-store), embedded
// assets, scs sessions and their clean-up, flashes, form errors and the
// base-path and local-path helpers.
//
// It has no routes and no handlers of either site: each site keeps its own
// router, so importing kit brings no page of the other site within reach.
package kit
