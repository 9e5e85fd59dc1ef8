package web

import "github.com/stacks-ils/stacks/kit"

// isLocalPath reports whether s, sent back in a Location header, can only take a
// browser to a page of this site (kit.IsLocalPath).
var isLocalPath = kit.IsLocalPath
