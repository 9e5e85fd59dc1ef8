// Package copycat is copy cataloguing: searching other libraries' catalogues (the
// targets an administrator lists) for a record to import instead of typing it.
//
// A target speaks SRU (searchRetrieve over HTTP, CQL queries, MARCXML records) or
// Z39.50 (Init, Search with a type-1 query using Bib-1 attributes, Present in
// USMARC, over BER on TCP). A search asks every enabled target at once, each under
// its own timeout, and reports per target: the records it found, or why it gave
// none ("timed out after 3 s", "answered something that is not Z39.50"). A slow
// or broken target never holds the others back.
//
// Records come back as catalog/marc records, read by that package's ISO 2709 and
// MARCXML readers (MARC-8 converted), in the one normal form every import uses.
package copycat

import (
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// Kind is a target's protocol.
type Kind string

// The protocols a target can speak.
const (
	SRU   Kind = "sru"
	Z3950 Kind = "z3950"
)

// Syntax is the record syntax a target is asked for.
type Syntax string

// The record syntaxes: binary MARC 21 (USMARC, ISO 2709) or MARCXML.
const (
	MARC21  Syntax = "MARC21"
	MARCXML Syntax = "MARCXML"
)

// Target is one catalogue to search.
type Target struct {
	ID   int64
	Name string
	Kind Kind
	// Address is the base URL of an SRU service ("https://host/path"), or a
	// Z39.50 server as "host:port/database".
	Address string
	Syntax  Syntax
	Enabled bool
	// Timeout bounds one search of this target, connecting included.
	Timeout time.Duration
	// Indexes name the CQL indexes an SRU target is searched with, by Field.
	// Empty ones take the defaults: bath.isbn, dc.title, dc.creator.
	ISBNIndex, TitleIndex, AuthorIndex string
}

// Field is what a search looks in.
type Field string

// The searchable fields.
const (
	ISBN   Field = "isbn"
	Title  Field = "title"
	Author Field = "author"
)

// Query is one search: a term in a field.
type Query struct {
	Field Field
	Term  string
	// Note is what the cataloguer should know about the term ("" if nothing):
	// an ISBN whose check digit is wrong is searched as printed.
	Note string
}

// DefaultMaxRecords is how many records a search takes from each target.
const DefaultMaxRecords = 10

// MaxRecords bounds the records asked of one target, whatever the caller asks.
const MaxRecords = 50

// NewQuery validates a search as a cataloguer typed or scanned it. An ISBN is
// normalised (catalog.NormalizeISBN: a leading "ISBN", hyphens and spaces
// dropped, a price add-on ignored, a scanned EAN-13 kept as ISBN-13); one with a
// wrong check digit is searched as printed, with a Note, since books are printed
// with them.
func NewQuery(field Field, term string) (Query, error) {
	term = strings.TrimSpace(term)
	switch field {
	case ISBN:
		return isbnQuery(term)
	case Title, Author:
		if term == "" {
			return Query{}, stacks.FieldErrorf("term", stacks.EINVALID, "Type a %s to search for.", field)
		}
		if len(term) > 200 {
			return Query{}, stacks.FieldErrorf("term", stacks.EINVALID, "The %s is longer than 200 characters; shorten it.", field)
		}
		if strings.ContainsFunc(term, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return Query{}, stacks.FieldErrorf("term", stacks.EINVALID, "The %s contains control characters; retype it.", field)
		}
		return Query{Field: field, Term: term}, nil
	}
	return Query{}, stacks.FieldErrorf("field", stacks.EINVALID, "Search by ISBN, title or author (not %q).", field)
}

// isbnQuery is the search for an ISBN as typed or scanned.
func isbnQuery(s string) (Query, error) {
	if s == "" {
		return Query{}, stacks.FieldErrorf("term", stacks.EINVALID, "Scan or type an ISBN.")
	}
	n := catalog.NormalizeISBN(s)
	if n == "" {
		return Query{}, stacks.FieldErrorf("term", stacks.EINVALID, "%q is not an ISBN: an ISBN has 10 or 13 digits (the last of an ISBN-10 may be X).", s)
	}
	q := Query{Field: ISBN, Term: n}
	if !catalog.ISBNCheckOK(n) {
		q.Note = fmt.Sprintf("The check digit of ISBN %s is wrong: it is searched as printed. If the book does not say so, scan it again or check the digits.", n)
	}
	return q, nil
}

// Result is what one target answered to a search.
type Result struct {
	Target Target
	// Records are the records the target returned, at most the number asked.
	Records []*marc.Record
	// Total is the number of hits the target reported (it may be more than the
	// records returned).
	Total int
	// Skipped counts records the target returned that could not be read.
	Skipped int
	// Err says why the target gave no records; nil when it answered.
	Err     error
	Elapsed time.Duration
}

// TargetError is a target's failure as the cataloguer reads it.
type TargetError struct {
	Target string
	Reason string
	Err    error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("%s: %s", e.Target, e.Reason)
}

func (e *TargetError) Unwrap() error { return e.Err }

// protocolError is a target's answer that breaks its protocol.
type protocolError struct {
	reason string
}

func (e *protocolError) Error() string { return e.reason }

func notProtocol(format string, args ...any) error {
	return &protocolError{reason: fmt.Sprintf(format, args...)}
}

// diagnosticError is a target's own report that it could not search.
type diagnosticError struct {
	reason string
}

func (e *diagnosticError) Error() string { return e.reason }
