// Package sip is the SIP2 server (3M Standard Interchange Protocol 2.00) that
// self-check machines and automated materials-handling sorters talk to. It runs
// the desk's circulation service, so a checkout, checkin or renewal over SIP follows
// exactly the rules it follows at the desk; only the decisions a member of staff
// makes at the desk are made by SIP's OverridePolicy instead.
//
// # Connections
//
// One goroutine serves each connection, handling its messages in order (SIP is
// request and response). A message ends with CR, CR LF or LF; the answers end the
// way the terminal's messages do. A message longer than Config.MaxMessage (4 KB)
// is answered 96 and closes the connection, and Config.IdleTimeout (5 minutes)
// without one closes it too. A panic while handling a message is logged and
// closes that connection only.
//
// Parse reads what real terminals send, as forgivingly as Koha's and Evergreen's
// servers: fields in any order, empty fields, a "|" before, between or after the
// error detection fields (see Parse).
//
// A connection must log in within Config.LoginTimeout (30 seconds) of opening (or
// of a failed login that logged it out); what it sends meanwhile, resend requests
// (97) included, does not extend that, and a 97 counts as one of the five messages
// without a login (see Login). At most Config.MaxConns connections (256) are open,
// and at most Config.MaxConnsPerAddr (16) from one client address (an IPv6 /64),
// loopback included; connections beyond are closed at once. So a stranger cannot
// hold the server's connections and lock the terminals out.
//
// Serve may run on several listeners at once, plain TCP and TLS (a listener from
// tls.NewListener), sharing these limits. A TLS connection's handshake counts in
// its time to log in; a client that does not speak TLS is closed at its first bytes.
//
// Bytes that cannot be read as a message (an identifier that is not two digits,
// invalid UTF-8 included) get a request to resend (96). A message that arrived
// whole but is not one the server supports gets no answer and leaves the
// connection open (see conn.unsupported for why). Both count in the metrics as
// "other" (MessageLabel).
//
// # Login
//
// Accounts are rows of sip_accounts (username, bcrypt password hash, institution,
// branch). Before a successful login (93) every other message is answered with a
// failed login response (940), which tells a terminal that sent, for example, its
// status (99) first that it must log in; nothing is read or changed for it. Five such
// messages, or three failed logins, close the connection; five failed logins for an
// account from one address within 15 minutes lock that account there for 15
// minutes. Failures and lockouts are counted by the one sign-in throttle
// (passwords.Limiter) in login_throttle, under SIP2's own keys (throttle.go), so a
// restart lifts none, and staff see and may lift them. The account's branch is where its
// checkouts and checkins happen; its institution is the AO of every answer (the AO
// a terminal sends is not checked).
//
// # Account settings
//
// Each account has its own Settings (checked_in_ok, hold items as barcodes or
// titles, a sort-bin map, denied messages, contact details without a PIN), read at
// login and again every PrefsMaxAge, so that an administrator's change, or a
// deactivation (which closes the connection), reaches a terminal within seconds.
// docs/sip.md lists every message and field per setting.
//
// # Error detection
//
// When a request carries a sequence number (AY) and checksum (AZ), the checksum is
// verified and the answer carries the same sequence number and its own checksum. A
// wrong checksum, or a message that cannot be parsed, is answered with 96, a
// request to send it again; five such messages in a row close the connection. A
// message the server does not support (the BX field of the status answer lists
// what it does: the sixteen requests of 2.00 less the account's denied ones) is
// not answered, with or without
// error detection, since sending it again would not help. 97 resends the last
// answer, with the 97's error detection fields instead of its own, as Koha does.
//
// # Blocks and item properties
//
// Block patron (01), which a self-check sends when it keeps a card, blocks the
// patron with a staff note giving the terminal's message (AL) and whether the card
// was retained, and is answered with a patron status (24). Patron enable (25)
// lifts a block a terminal set, never one staff set (26). Item status update (19)
// stores the item properties (CH) on the item (20); item information (18) sends
// them back.
//
// # Dates
//
// Dates are SIP's 18 characters, YYYYMMDD, four blanks (the library's local time
// zone), HHMMSS. Transaction dates a terminal sends are not checked: a date in the
// past (an off-line transaction sent later) is accepted, but the transaction happens
// now; loans are not back-dated.
//
// # PINs
//
// A patron's PIN (AD) is checked when a terminal sends one: a field sent empty is a
// wrong PIN. Without the field, the terminal is trusted to have identified the
// patron. A PIN that matched is remembered for the patron at the terminal until an
// end patron session (35), a message for another patron or five minutes without
// one, because bcrypt is slow on purpose and terminals send the PIN with every
// message. A wrong PIN gets a patron status without the patron's name, fines or
// lists, and CQ N. Ten wrong PINs for a patron within 15 minutes, from any
// terminal, lock the patron's PIN for 15 minutes. A PIN or login check waits its
// turn for up to Config.CheckWait; one that got none is answered as not checked
// (a PIN without CQ, a login not at all), never as wrong.
//
// # Sorters
//
// The checkin answer (10) carries the item's permanent location (AQ, its home
// branch), the destination (CT) of an item that travels, the alert type (CV: 01 a
// hold to pick up here, 02 a hold to pick up at another branch, 04 a transfer home,
// 99 anything staff must look at), the holder (CY, DA) of a trapped hold, and a sort
// bin (CL) from the account's sort-bin map, else the configured SortBins.
//
// # Logging
//
// Logins, refusals and errors are logged at info level and above. Each message is
// logged at debug level with its answer, its duration and its SQL statements; the
// record is built only when debug logging is enabled, so it costs nothing otherwise.
// Passwords and PINs are starred out (Redact).
package sip
