package notices

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Service runs the notices' administration, the print batch and the patrons'
// choices in transactions of its own: each method opens one and commits it.
type Service struct {
	DB *db.DB
	// Prefs is the preference cache the servers read; saving the notice
	// settings (which are preferences) drops it.
	Prefs *library.PreferenceCache
}

// NewService returns a Service; prefs may be nil (preferences are then read per
// call).
func NewService(d *db.DB, prefs *library.PreferenceCache) *Service {
	if prefs == nil {
		prefs = library.NewPreferenceCache(false)
	}
	return &Service{DB: d, Prefs: prefs}
}

// queueRuns is how many daily runs the queue page lists: a week's.
const queueRuns = 7

// Queue is the queue page: the counts by status, the messages f selects, the
// latest daily runs, and the branches whose print batches it links to.
type Queue struct {
	Counts   Counts
	Messages []Message
	Runs     []Run
	Branches []library.Branch
}

// Queue reads the queue page in one read transaction.
func (s *Service) Queue(ctx context.Context, f Filter) (Queue, error) {
	var q Queue
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if q.Counts, err = countMessages(tx); err != nil {
			return err
		}
		if q.Messages, err = listMessages(tx, f); err != nil {
			return err
		}
		if q.Runs, err = recentRuns(tx, queueRuns); err != nil {
			return err
		}
		q.Branches, err = library.ListBranches(tx)
		return err
	})
	return q, err
}

// Message returns one message, ENOTFOUND if there is none.
func (s *Service) Message(ctx context.Context, id int64) (Message, error) {
	var m Message
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		m, err = findMessage(tx, id)
		return err
	})
	return m, err
}

// Resend puts a message back in the queue to go out at once (see resend).
func (s *Service) Resend(ctx context.Context, actor stacks.Actor, id int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return resend(tx, actor, id) })
}

// ResendFailed puts every failed message back in the queue at once and says how
// many.
func (s *Service) ResendFailed(ctx context.Context, actor stacks.Actor) (int, error) {
	var n int
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		n, err = resendFailed(tx, actor)
		return err
	})
	return n, err
}

// Templates returns every template, the administrators' versions where they
// changed one.
func (s *Service) Templates(ctx context.Context) ([]Template, error) {
	var ts []Template
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		ts, err = listTemplates(tx)
		return err
	})
	return ts, err
}

// Template returns the template of key, ENOTFOUND if there is no such key.
func (s *Service) Template(ctx context.Context, key string) (Template, error) {
	var t Template
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		t, err = findTemplate(tx, key)
		return err
	})
	return t, err
}

// SaveTemplate stores an administrator's version of a template, after checking
// that it parses and renders the sample notice within renderLimits. The check
// runs before the write transaction, which holds the writer only for the
// insert: a template that renders slowly keeps no check-in waiting.
func (s *Service) SaveTemplate(ctx context.Context, actor stacks.Actor, t Template) error {
	if _, ok := DefaultTemplate(t.Key); !ok {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no notice template %q.", t.Key)
	}
	if _, err := Preview(t, "Stacks Library"); err != nil {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error { return saveTemplate(tx, actor, t) })
}

// ResetTemplate goes back to the built-in template of key.
func (s *Service) ResetTemplate(ctx context.Context, actor stacks.Actor, key string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return resetTemplate(tx, actor, key) })
}

// Settings are the notice settings page: when the daily run starts and how far
// ahead patrons are warned (as stored, the defaults where none is), the rules,
// and the categories and item types a rule may be scoped to.
type Settings struct {
	RunAt                 string
	HoldExpiringDays      string
	CardExpiryDays        string
	Rules                 []Rule
	Categories, ItemTypes []library.Named
}

// Settings reads the settings page in one read transaction.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	var set Settings
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		p, err := library.LoadPreferences(tx)
		if err != nil {
			return err
		}
		stored := func(name, def string) string {
			if v := p.Raw[name]; v != "" {
				return v
			}
			return def
		}
		set.RunAt = stored(PrefRunAt, DefaultRunAt)
		set.HoldExpiringDays = stored(PrefHoldExpiringDays, strconv.Itoa(DefaultHoldExpiringDays))
		set.CardExpiryDays = stored(PrefCardExpiryDays, strconv.Itoa(DefaultCardExpiryDays))
		if set.Rules, err = listRules(tx); err != nil {
			return err
		}
		set.Categories, set.ItemTypes, err = library.ListScopes(tx)
		return err
	})
	return set, err
}

// SaveSettings stores when the daily run starts (runAt, checked by ParseRunAt)
// and how many days ahead holds and cards are warned of, audited, and drops the
// cached preferences so that the next request reads them.
func (s *Service) SaveSettings(ctx context.Context, actor stacks.Actor, runAt string, holdDays, cardDays int) error {
	err := s.DB.Write(ctx, func(tx *db.Tx) error {
		for name, value := range map[string]string{PrefRunAt: runAt, PrefHoldExpiringDays: strconv.Itoa(holdDays), PrefCardExpiryDays: strconv.Itoa(cardDays)} {
			if err := library.SetPreference(tx, name, value); err != nil {
				return err
			}
		}
		return tx.Audit(actor, "notices.settings", "", 0,
			"run at "+runAt+", hold warning "+strconv.Itoa(holdDays)+" days, card warning "+strconv.Itoa(cardDays)+" days")
	})
	if err != nil {
		return err
	}
	s.Prefs.Invalidate()
	return nil
}

// SaveRule adds a rule, or replaces the one for the same category and item type.
func (s *Service) SaveRule(ctx context.Context, actor stacks.Actor, r Rule) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return saveRule(tx, actor, r) })
}

// PrintBatch is a branch's batch of notices to print, with the postal address
// of each patron, and every branch (to choose another batch).
type PrintBatch struct {
	Branch    library.Branch
	Branches  []library.Branch
	Messages  []Message
	Addresses map[int64]string
}

// PrintBatch reads the print batch of the branch with code, or of the branch
// with id homeBranchID when code is empty, in one read transaction.
func (s *Service) PrintBatch(ctx context.Context, code string, homeBranchID int64) (PrintBatch, error) {
	var b PrintBatch
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if b.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		if code == "" {
			for _, br := range b.Branches {
				if br.ID == homeBranchID {
					code = br.Code
				}
			}
		}
		if b.Branch, err = library.FindBranchByCode(tx, code); err != nil {
			return err
		}
		if b.Messages, err = printBatch(tx, b.Branch.ID); err != nil {
			return err
		}
		ids := make([]int64, 0, len(b.Messages))
		for _, m := range b.Messages {
			ids = append(ids, m.PatronID)
		}
		b.Addresses, err = patronAddresses(tx, ids)
		return err
	})
	return b, err
}

// MarkPrinted marks the printed notices ids of the branch's batch as sent, and
// returns the branch's code and how many changed. A branch that does not exist
// is ENOTFOUND; any other failure to read it is returned as it is.
func (s *Service) MarkPrinted(ctx context.Context, actor stacks.Actor, branchID int64, ids []int64) (code string, n int, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT code FROM branches WHERE id = ?`, branchID).Scan(&code)
		if errors.Is(err, sql.ErrNoRows) {
			return stacks.Errorf(stacks.ENOTFOUND, "There is no branch %d.", branchID)
		} else if err != nil {
			return fmt.Errorf("find branch %d: %w", branchID, err)
		}
		n, err = markPrinted(tx, actor, branchID, ids)
		return err
	})
	return code, n, err
}

// PatronChoices reads a patron's notice choices (and no messages), in one
// statement.
func (s *Service) PatronChoices(ctx context.Context, patronID int64, email string) ([]Preference, error) {
	var pn PatronNotices
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		pn, err = FindPatronNotices(tx, patronID, email, 0)
		return err
	})
	return pn.Preferences, err
}

// SetPatronChoices stores a patron's choices (kind to delivery), audited; email
// is refused for a patron without an address.
func (s *Service) SetPatronChoices(ctx context.Context, actor stacks.Actor, patronID int64, email string, choices map[string]string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		return SetPatronPreferences(tx, actor, patronID, email, choices)
	})
}
