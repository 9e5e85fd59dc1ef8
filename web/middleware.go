package web

import "strconv"

// ContentSecurityPolicy is the staff site's policy (kit.SecurityHeaders): no
// inline script, styles, scripts and images from the site only, never framed.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func itoa(n int) string { return strconv.Itoa(n) }
