package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// BlockSourceTerminal is patrons.block_source for a block a self-check set (SIP2
// Block Patron); a block staff set has "".
const BlockSourceTerminal = "sip"

// BlockFromTerminal blocks a patron at a self-check's request (SIP2 Block Patron,
// sent when the machine keeps a card or suspects misuse). The staff note says it
// was a self-check, whether the card was retained, and the terminal's own message,
// so that the desk knows why and where the card is; the audit log has the same.
// The block is marked as a terminal's, which a terminal's Patron Enable may lift
// (EnableFromTerminal). A patron staff have already blocked keeps staff's block
// and note: the request is only written to the audit log.
func BlockFromTerminal(tx *db.Tx, actor stacks.Actor, id int64, message string, cardRetained bool) error {
	note := "Blocked by a self-check"
	if cardRetained {
		note += " (card retained)"
	}
	if msg := terminalText(message, maxBlock-len(note)-2); msg != "" {
		note += ": " + msg
	}
	var blocked bool
	var source string
	err := tx.QueryRow(`SELECT blocked, block_source FROM patrons WHERE id = ?`, id).Scan(&blocked, &source)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", id)
	} else if err != nil {
		return fmt.Errorf("block patron %d from a terminal: %w", id, err)
	}
	if blocked && source != BlockSourceTerminal {
		return tx.Audit(actor, "patron.block", "patron", id, note+" (already blocked by staff; their block and note kept)")
	}
	if _, err := tx.Exec(`UPDATE patrons SET blocked = 1, block_note = ?, block_source = ? WHERE id = ?`, note, BlockSourceTerminal, id); err != nil {
		return fmt.Errorf("block patron %d from a terminal: %w", id, err)
	}
	return tx.Audit(actor, "patron.block", "patron", id, note)
}

// EnableFromTerminal lifts a block that a self-check set (SIP2 Patron Enable). A
// block staff set is never lifted this way: staff blocked the patron for a reason a
// machine cannot judge. It reports whether a block was lifted; a patron who is not
// blocked, or blocked by staff, is left as is.
func EnableFromTerminal(tx *db.Tx, actor stacks.Actor, id int64) (bool, error) {
	var blocked bool
	var source, note string
	err := tx.QueryRow(`SELECT blocked, block_source, block_note FROM patrons WHERE id = ?`, id).Scan(&blocked, &source, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return false, stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", id)
	} else if err != nil {
		return false, fmt.Errorf("enable patron %d from a terminal: %w", id, err)
	}
	if !blocked || source != BlockSourceTerminal {
		return false, nil
	}
	if _, err := tx.Exec(`UPDATE patrons SET blocked = 0, block_note = '', block_source = '' WHERE id = ? AND block_source = ?`, id, BlockSourceTerminal); err != nil {
		return false, fmt.Errorf("enable patron %d from a terminal: %w", id, err)
	}
	return true, tx.Audit(actor, "patron.unblock", "patron", id, "Enabled by a self-check; the block was: "+note)
}

// terminalText makes text a terminal sent fit for a note: valid UTF-8, control
// characters as spaces, trimmed, at most max runes.
func terminalText(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		s = strings.TrimSpace(string([]rune(s)[:max]))
	}
	return s
}
