package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// Share is one virtual user's part of the library: a patron who may borrow without
// confirmation, and items only this user lends and returns, so that users never
// collide over an item (FOLIO's CICO tests give each user its own data too).
type Share struct {
	Card     string
	Barcodes []string
}

// ShareQuery says which shares to find in a database.
type ShareQuery struct {
	// Branch is the code of the branch the desk or SIP account works at (CEN):
	// items of other branches would go in transit when checked in there.
	Branch string
	// Items is the number of items in each share.
	Items int
	// Max is the most shares wanted (0: all there are).
	Max int
}

// SharesFromDB reads shares from the server's database without changing it: a
// SQLite file, or a postgres:// URL, the --db the servers were given (on
// PostgreSQL every server of a consortium shares it). It opens the database with
// one read connection (db.Open with ReadConns 1 and WriteConns 1; no migration)
// and runs only SELECTs, in one read transaction, so it may run while the
// servers serve. A share's patron is an adult in good standing: not blocked,
// card valid for at least another week, balance under the fines limit, no current
// loans (so the loan limit is never reached); its items are available, on the
// shelf of their home branch (Branch), of a type that may be lent, and on records
// with no open holds (a hold would ask for confirmation or trap the item).
func SharesFromDB(ctx context.Context, path string, q ShareQuery) ([]Share, error) {
	if q.Items <= 0 {
		return nil, fmt.Errorf("items per share must be at least 1, got %d", q.Items)
	}
	// A SQLite file must exist (Open would create it); a PostgreSQL URL has
	// nothing to stat: Open connects and says what is wrong.
	if !db.IsPostgresURL(path) {
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("database %s does not exist: give the server's database file with --db (or a list with --shares)", path)
			}
			return nil, err
		}
	}
	d, err := db.Open(path, db.Options{ReadConns: 1, WriteConns: 1, CommitEach: true})
	if err != nil {
		return nil, err
	}
	defer d.Close()

	var cards, barcodes []string
	err = d.Read(ctx, func(tx *db.Tx) error {
		var branchID int64
		if err := tx.QueryRow(`SELECT id FROM branches WHERE code = ?`, q.Branch).Scan(&branchID); err != nil {
			return fmt.Errorf("branch %q: %w (is %s a Stacks database?)", q.Branch, err, db.DisplayName(path))
		}
		soon := time.Now().UTC().AddDate(0, 0, 8).Format("2006-01-02")
		rows, err := tx.Query(`
			SELECT p.card FROM patrons p JOIN patron_categories c ON c.id = p.category_id
			WHERE c.code = 'ADULT' AND p.blocked = 0 AND p.expires_on >= ?
			  AND coalesce((SELECT sum(l.amount_cents) FROM ledger l WHERE l.patron_id = p.id), 0) <
			      coalesce((SELECT CAST(value AS INTEGER) FROM preferences WHERE name = 'fines_limit_cents'), 0)
			  AND NOT EXISTS (SELECT 1 FROM loans o WHERE o.patron_id = p.id AND o.returned_at IS NULL)
			ORDER BY p.id`, soon)
		if err != nil {
			return fmt.Errorf("find patrons: %w", err)
		}
		if cards, err = scanStrings(rows); err != nil {
			return fmt.Errorf("find patrons: %w", err)
		}
		rows, err = tx.Query(`
			SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
			WHERE i.status = 'available' AND t.not_for_loan = 0
			  AND i.home_branch_id = ? AND i.current_branch_id = ?
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id
			                  AND h.status IN ('queued', 'in_transit', 'waiting'))
			  AND NOT EXISTS (SELECT 1 FROM loans o WHERE o.item_id = i.id AND o.returned_at IS NULL)
			ORDER BY i.id`, branchID, branchID)
		if err != nil {
			return fmt.Errorf("find items: %w", err)
		}
		if barcodes, err = scanStrings(rows); err != nil {
			return fmt.Errorf("find items: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := min(len(cards), len(barcodes)/q.Items)
	if q.Max > 0 {
		n = min(n, q.Max)
	}
	shares := make([]Share, n)
	for i := range shares {
		shares[i] = Share{Card: cards[i], Barcodes: barcodes[i*q.Items : (i+1)*q.Items]}
	}
	return shares, nil
}

func scanStrings(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ReadShares reads a share list: one share a line, the patron's card and then the
// item barcodes, separated by spaces or tabs; blank lines and lines starting with
// # are skipped. WriteShares writes one.
func ReadShares(r io.Reader) ([]Share, error) {
	var shares []Share
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: write a card and at least one item barcode, e.g. P0001 I00001 I00002", n)
		}
		shares = append(shares, Share{Card: f[0], Barcodes: f[1:]})
	}
	return shares, sc.Err()
}

// WriteShares writes shares in ReadShares' format.
func WriteShares(w io.Writer, shares []Share) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# stacks load shares: one virtual user a line, the patron's card, then the items it lends and returns")
	for _, s := range shares {
		fmt.Fprintln(bw, s.Card, strings.Join(s.Barcodes, " "))
	}
	return bw.Flush()
}
