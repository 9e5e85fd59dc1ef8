package web

import "github.com/stacks-ils/stacks/kit"

// sessionCodec stores session data as a small JSON document (kit.SessionCodec):
// numbers, strings, flash messages, and the desk visit as the site's own kind.
type sessionCodec = kit.SessionCodec[deskVisit]
