package copycat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Service keeps the list of targets and searches the enabled ones. Each method
// opens its own transaction; a search reads the targets in one and asks them
// after it has ended, so no transaction waits on the network.
type Service struct {
	DB       *db.DB
	Searcher Searcher
}

// NewService returns a Service on d.
func NewService(d *db.DB) *Service { return &Service{DB: d} }

// The bounds of a target's timeout. The staff server gives a page 60 s to be
// written; a cataloguer waits far less for one catalogue.
const (
	MinTimeout = time.Second
	MaxTimeout = 30 * time.Second
)

const targetColumns = `id, name, kind, address, syntax, enabled, timeout_ms, isbn_index, title_index, author_index`

func scanTarget(row interface{ Scan(...any) error }) (Target, error) {
	var t Target
	var kind, syntax string
	var enabled, ms int64
	err := row.Scan(&t.ID, &t.Name, &kind, &t.Address, &syntax, &enabled, &ms, &t.ISBNIndex, &t.TitleIndex, &t.AuthorIndex)
	t.Kind, t.Syntax = Kind(kind), Syntax(syntax)
	t.Enabled = enabled != 0
	t.Timeout = time.Duration(ms) * time.Millisecond
	return t, err
}

// listTargets reads the targets in tx, by name; only the enabled ones when
// enabledOnly.
func listTargets(tx *db.Tx, enabledOnly bool) ([]Target, error) {
	q := `SELECT ` + targetColumns + ` FROM copycat_targets`
	if enabledOnly {
		q += ` WHERE enabled = 1`
	}
	rows, err := tx.Query(q + ` ORDER BY lower(name), id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Target
	for rows.Next() {
		t, err := scanTarget(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// findTarget reads one target; sql.ErrNoRows when there is none with id.
func findTarget(tx *db.Tx, id int64) (Target, error) {
	return scanTarget(tx.QueryRow(`SELECT `+targetColumns+` FROM copycat_targets WHERE id = ?`, id))
}

// Targets lists every target, enabled or not, by name.
func (s *Service) Targets(ctx context.Context) ([]Target, error) {
	var out []Target
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		out, err = listTargets(tx, false)
		return err
	})
	return out, err
}

// Target reads one target; sql.ErrNoRows when there is none with id.
func (s *Service) Target(ctx context.Context, id int64) (Target, error) {
	var t Target
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		t, err = findTarget(tx, id)
		return err
	})
	return t, err
}

// AddTarget validates t (see Normalize) and adds it. Its ID is ignored.
func (s *Service) AddTarget(ctx context.Context, actor stacks.Actor, t Target) (Target, error) {
	t, err := Normalize(t)
	if err != nil {
		return Target{}, err
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := nameFree(tx, t.Name, 0); err != nil {
			return err
		}
		now := db.FormatTime(tx.Now())
		t.ID, err = tx.InsertID(`INSERT INTO copycat_targets (name, kind, address, syntax, enabled, timeout_ms,
			isbn_index, title_index, author_index, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.Name, string(t.Kind), t.Address, string(t.Syntax), boolInt(t.Enabled), t.Timeout.Milliseconds(),
			t.ISBNIndex, t.TitleIndex, t.AuthorIndex, now, now)
		if err != nil {
			return err
		}
		return tx.Audit(actor, "copycat.target.add", "copycat_target", t.ID, describeTarget(t))
	})
	if err != nil {
		return Target{}, err
	}
	return t, nil
}

// UpdateTarget validates t and replaces the target with t.ID by it; sql.ErrNoRows
// when there is none.
func (s *Service) UpdateTarget(ctx context.Context, actor stacks.Actor, t Target) (Target, error) {
	t, err := Normalize(t)
	if err != nil {
		return Target{}, err
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		old, err := findTarget(tx, t.ID)
		if err != nil {
			return err
		}
		if err := nameFree(tx, t.Name, t.ID); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE copycat_targets SET name = ?, kind = ?, address = ?, syntax = ?, enabled = ?,
			timeout_ms = ?, isbn_index = ?, title_index = ?, author_index = ?, updated_at = ? WHERE id = ?`,
			t.Name, string(t.Kind), t.Address, string(t.Syntax), boolInt(t.Enabled), t.Timeout.Milliseconds(),
			t.ISBNIndex, t.TitleIndex, t.AuthorIndex, db.FormatTime(tx.Now()), t.ID)
		if err != nil {
			return err
		}
		return tx.Audit(actor, "copycat.target.update", "copycat_target", t.ID, "was "+describeTarget(old)+"; now "+describeTarget(t))
	})
	if err != nil {
		return Target{}, err
	}
	return t, nil
}

// DeleteTarget removes the target with id; sql.ErrNoRows when there is none.
func (s *Service) DeleteTarget(ctx context.Context, actor stacks.Actor, id int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		old, err := findTarget(tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM copycat_targets WHERE id = ?`, id); err != nil {
			return err
		}
		return tx.Audit(actor, "copycat.target.delete", "copycat_target", id, describeTarget(old))
	})
}

// ErrNoTargets is the search's answer when no target is enabled.
var ErrNoTargets = stacks.Errorf(stacks.ECONFLICT,
	"No copy cataloguing target is enabled. An administrator adds the catalogues to search under Administration, Copy cataloguing targets.")

// Search runs q at every enabled target (see Searcher.Search), taking at most
// max records from each. With none enabled it is ErrNoTargets.
func (s *Service) Search(ctx context.Context, q Query, max int) ([]Result, error) {
	var targets []Target
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		targets, err = listTargets(tx, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, ErrNoTargets
	}
	return s.Searcher.Search(ctx, targets, q, max), nil
}

func nameFree(tx *db.Tx, name string, self int64) error {
	var id int64
	err := tx.QueryRow(`SELECT id FROM copycat_targets WHERE lower(name) = lower(?) AND id <> ?`, name, self).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return stacks.FieldErrorf("name", stacks.EINVALID, "There is already a target named %q; give this one another name.", name)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func describeTarget(t Target) string {
	state := "enabled"
	if !t.Enabled {
		state = "disabled"
	}
	return fmt.Sprintf("%s (%s %s, %s, %s, timeout %s)", t.Name, t.Kind, t.Address, t.Syntax, state, formatSeconds(t.Timeout))
}

// Normalize checks a target as an administrator entered it and fills in what
// follows from its protocol: SRU targets are MARCXML; a Z39.50 target's
// syntax defaults to MARC21; the timeout to
// DefaultTimeout. Each problem is a field error saying how to fix it.
func Normalize(t Target) (Target, error) {
	t.Name = strings.TrimSpace(t.Name)
	t.Address = strings.TrimSpace(t.Address)
	t.ISBNIndex = strings.TrimSpace(t.ISBNIndex)
	t.TitleIndex = strings.TrimSpace(t.TitleIndex)
	t.AuthorIndex = strings.TrimSpace(t.AuthorIndex)
	switch {
	case t.Name == "":
		return t, stacks.FieldErrorf("name", stacks.EINVALID, "Give the target a name, the one cataloguers will see beside its results.")
	case len(t.Name) > 100:
		return t, stacks.FieldErrorf("name", stacks.EINVALID, "The name is longer than 100 characters; shorten it.")
	case !utf8.ValidString(t.Name) || strings.ContainsFunc(t.Name, isControl):
		return t, stacks.FieldErrorf("name", stacks.EINVALID, "The name contains control characters or bytes that are not text; retype it.")
	case !utf8.ValidString(t.Address) || len(t.Address) > 500:
		return t, stacks.FieldErrorf("address", stacks.EINVALID, "The address must be text of at most 500 characters; retype it.")
	}
	if t.Timeout == 0 {
		t.Timeout = DefaultTimeout
	}
	if t.Timeout < MinTimeout || t.Timeout > MaxTimeout {
		return t, stacks.FieldErrorf("timeout", stacks.EINVALID, "The timeout must be from %s to %s.", formatSeconds(MinTimeout), formatSeconds(MaxTimeout))
	}
	if t.Timeout%time.Millisecond != 0 {
		t.Timeout = t.Timeout.Round(time.Millisecond)
	}
	switch t.Kind {
	case SRU:
		return normalizeSRU(t)
	case Z3950:
		return normalizeZ3950(t)
	}
	return t, stacks.FieldErrorf("kind", stacks.EINVALID, "Choose the target's protocol: SRU or Z39.50.")
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func normalizeSRU(t Target) (Target, error) {
	u, err := url.Parse(t.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsFunc(t.Address, isControl) {
		return t, stacks.FieldErrorf("address", stacks.EINVALID,
			"Write an SRU target's address as its base URL, starting http:// or https:// (for example https://sru.example.org/catalog).")
	}
	if t.Syntax == "" {
		t.Syntax = MARCXML
	}
	if t.Syntax != MARCXML {
		return t, stacks.FieldErrorf("syntax", stacks.EINVALID, "SRU targets are asked for MARCXML; choose MARCXML.")
	}
	for _, ix := range []struct{ field, name, value string }{
		{"isbn_index", "ISBN", t.ISBNIndex}, {"title_index", "title", t.TitleIndex}, {"author_index", "author", t.AuthorIndex},
	} {
		if ix.value != "" && !cqlIndexName(ix.value) {
			return t, stacks.FieldErrorf(ix.field, stacks.EINVALID,
				"The %s index %q is not a CQL index name (letters, digits, '.', '_' and '-', such as dc.title); leave it empty for the default.", ix.name, ix.value)
		}
	}
	return t, nil
}

func normalizeZ3950(t Target) (Target, error) {
	if _, _, err := parseZAddress(t.Address); err != nil || strings.ContainsFunc(t.Address, isControl) {
		msg := "Write a Z39.50 target's address as host:port/database (for example z3950.example.org:210/Books)."
		if err != nil {
			msg = strings.ToUpper(err.Error()[:1]) + err.Error()[1:] + "."
		}
		return t, stacks.FieldErrorf("address", stacks.EINVALID, "%s", msg)
	}
	if t.Syntax == "" {
		t.Syntax = MARC21
	}
	if t.Syntax != MARC21 && t.Syntax != MARCXML {
		return t, stacks.FieldErrorf("syntax", stacks.EINVALID, "Choose the record syntax: MARC21 (USMARC) or MARCXML.")
	}
	if t.ISBNIndex != "" || t.TitleIndex != "" || t.AuthorIndex != "" {
		return t, stacks.FieldErrorf("isbn_index", stacks.EINVALID,
			"Index names are CQL, for SRU targets; a Z39.50 target is searched with Bib-1 attributes. Leave them empty.")
	}
	return t, nil
}

func cqlIndexName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
