// Package privacy keeps only the personal data the library needs:
// loan history is anonymised some days after each return, patrons inactive for
// some years are purged, and a patron's data is exported on request (the GDPR
// right of access). Every run and export is audited, never with a patron's name
// or card. docs/privacy.md says what is kept and for how long.
//
// Anonymised loans stay in the loans table with their item, branch and dates and
// a snapshot of the patron's category and home branch, so that every count of
// loans (per item, per branch, per day, per patron category) is the same before
// and after.
package privacy

import (
	"context"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Preference names (the administrator's preferences page sets them).
const (
	PrefAnonymiseLoansAfterDays = "anonymise_loans_after_days"
	PrefPurgeInactiveAfterYears = "purge_inactive_after_years"
)

// DefaultChunk is how many loans or patrons one write transaction handles: a
// desk's checkout that arrives meanwhile waits for at most one chunk.
const DefaultChunk = 300

// Options control a run.
type Options struct {
	// DryRun counts what would be anonymised and purged, and changes nothing.
	DryRun bool
	// Chunk is how many loans (or patrons) one write transaction handles
	// (default DefaultChunk).
	Chunk int
	// Pace is the share of the time a run leaves the writer to others: after each
	// write transaction it waits Pace times as long as that took (0: no pause).
	Pace float64
	// Actor is who the audit log names (default stacks.System).
	Actor stacks.Actor
	// OnWrite, if set, is told how long each write transaction of the run took
	// (benchmarks measure how long the desk may wait behind one).
	OnWrite func(time.Duration)
}

func (o Options) chunk() int {
	if o.Chunk <= 0 {
		return DefaultChunk
	}
	return o.Chunk
}

func (o Options) actor() stacks.Actor {
	if o.Actor.Name == "" {
		return stacks.System
	}
	return o.Actor
}

// pause waits after a write that took d, so the desk's writes get their turn.
func (o Options) pause(ctx context.Context, d time.Duration) {
	if o.OnWrite != nil {
		o.OnWrite(d)
	}
	if o.Pace <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(float64(d) * o.Pace))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Result says what a run did (or, dry, would do).
type Result struct {
	DryRun bool
	// AnonymiseAfterDays and PurgeAfterYears are the preferences the run used.
	AnonymiseAfterDays int
	PurgeAfterYears    int
	// Anonymised is the number of loans that lost their patron; Notices, of
	// notice items and messages deleted with them.
	Anonymised int
	Notices    int
	// Purged is the number of patrons deleted.
	Purged int
}

// String is the one-line summary the CLI prints.
func (r Result) String() string {
	verb := ""
	if r.DryRun {
		verb = " (dry run: nothing changed)"
	}
	return fmt.Sprintf("anonymised %d loans (after %d days; 0 is never), deleted %d old notices, purged %d patrons (inactive %d years; 0 is never)%s",
		r.Anonymised, r.AnonymiseAfterDays, r.Notices, r.Purged, r.PurgeAfterYears, verb)
}

// RunDaily is the daily privacy job the server's scheduler calls: it reads the
// preferences, anonymises the loan history past the horizon, then purges the
// inactive patrons, pacing its writes so that the desk is never held up.
func RunDaily(ctx context.Context, d *db.DB) (Result, error) {
	return Run(ctx, d, d.Now(), Options{Pace: 1})
}

// Run anonymises, then purges, as of now, with the preferences in the database.
// Either step with its preference 0 does nothing.
func Run(ctx context.Context, d *db.DB, now time.Time, opt Options) (Result, error) {
	var p library.Preferences
	if err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		p, err = library.LoadPreferences(tx)
		return err
	}); err != nil {
		return Result{}, err
	}
	res := Result{DryRun: opt.DryRun, AnonymiseAfterDays: p.AnonymiseLoansAfterDays, PurgeAfterYears: p.PurgeInactiveAfterYears}
	if p.AnonymiseLoansAfterDays > 0 {
		a, err := Anonymise(ctx, d, AnonymiseCutoff(now, p.AnonymiseLoansAfterDays), opt)
		if err != nil {
			return res, err
		}
		res.Anonymised, res.Notices = a.Loans, a.Notices
	}
	if p.PurgeInactiveAfterYears > 0 {
		n, err := PurgeInactive(ctx, d, PurgeCutoff(now, p.PurgeInactiveAfterYears), opt)
		if err != nil {
			return res, err
		}
		res.Purged = n
	}
	return res, nil
}

// AnonymiseCutoff is the instant before which returned loans are anonymised.
func AnonymiseCutoff(now time.Time, days int) time.Time { return now.UTC().AddDate(0, 0, -days) }

// PurgeCutoff is the instant before which a patron's last activity makes them
// inactive.
func PurgeCutoff(now time.Time, years int) time.Time { return now.UTC().AddDate(-years, 0, 0) }
