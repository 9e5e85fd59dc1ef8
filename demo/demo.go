// Package demo fills an empty library database with the demo library described in
// desk-session.md: three branches and their calendar, two staff accounts, the
// circulation rules, the fixture patrons and items that the desk scenario relies on,
// and a generated catalogue with patrons, loans, overdues, fines and holds, so that
// pages look and perform like a small real library.
//
// The data is deterministic. Everything random comes from a fixed seed, and every
// date (loans, due dates, holds, card expiry, holidays) is relative to the day the
// library is created, so two libraries created on the same day are identical, and a
// library created on any day has loans that are current and overdues that are recent.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/reports"
	"github.com/stacks-ils/stacks/staff"
)

// Options size the demo library. The zero value gives the library the desk scenario
// and its timings are specified with.
type Options struct {
	// Titles is the number of generated titles beside the ten fixture titles
	// (default 2000; at least 50, so that the fixture patrons' history has items).
	Titles int
	// Patrons is the number of patrons including the five fixtures (default 500).
	Patrons int
}

const (
	defaultTitles  = 2000
	minTitles      = 50
	defaultPatrons = 500
	fixturePatrons = 5
)

func (o Options) withDefaults() (Options, error) {
	if o.Titles < 0 || o.Patrons < 0 {
		return o, stacks.Errorf(stacks.EINVALID, "The demo library cannot have a negative number of titles or patrons (got %d and %d); 0 means the default.", o.Titles, o.Patrons)
	}
	if o.Titles == 0 {
		o.Titles = defaultTitles
	}
	o.Titles = max(o.Titles, minTitles)
	if o.Patrons == 0 {
		o.Patrons = defaultPatrons
	}
	o.Patrons = max(o.Patrons, fixturePatrons)
	return o, nil
}

// Summary counts what Create made, for the log line of serve --demo.
type Summary struct {
	Branches int
	Staff    int
	Patrons  int
	// Records counts all titles: the fixtures and the generated ones.
	Records int
	Items   int
	// Loans counts current loans (not the returned ones of the history); Overdue,
	// those among them already past their due date.
	Loans   int
	Overdue int
	// Holds counts open holds: queued, and waiting on the hold shelf.
	Holds int
	// Notices counts the messages the first daily notices run queued.
	Notices int
}

// Fixed ids: the database is empty, so the demo chooses them, and the generated
// data can refer to them before it is written.
const (
	branchCEN int64 = 1
	branchEAS int64 = 2
	branchWES int64 = 3

	catAdult int64 = 1
	catChild int64 = 2
	catStaff int64 = 3

	typeBook int64 = 1
	typeDVD  int64 = 2
	typeRef  int64 = 3
)

// seed makes the generated library the same on every run.
const seed1, seed2 = 0x5354_4143_4b53, 0x4445_4d4f

// IsEmpty reports whether the database has no branches yet: serve --demo fills only
// such a database, so that it never mixes demo data into a real library.
func IsEmpty(ctx context.Context, d *db.DB) (bool, error) {
	var n int
	err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM branches`).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("count branches: %w", err)
	}
	return n == 0, nil
}

// Create fills an empty, migrated database with the demo library in one
// transaction: either all of it is there afterwards, or none of it. The day of
// d.Now() is the day the library is created on; every loan, due date, overdue, hold
// and expiry date is relative to it, so the data is the same on every run on a given
// day. A database that already has branches is refused with a conflict error.
func Create(ctx context.Context, d *db.DB, opt Options) (Summary, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	err = d.Write(ctx, func(tx *db.Tx) error {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM branches`).Scan(&n); err != nil {
			return fmt.Errorf("count branches: %w", err)
		}
		if n > 0 {
			return stacks.Errorf(stacks.ECONFLICT, "This database already has %d branches, so it is not filled with the demo library. Start the demo with a new database file.", n)
		}
		lib := newLibrary(tx.Now(), opt)
		if err := lib.writeSetup(tx); err != nil {
			return err
		}
		desk, err := staff.Create(tx, staff.NewUser{Username: "desk", DisplayName: "Morgan Desk", Password: "desk", Role: staff.RoleCirculation, BranchCode: "CEN"})
		if err != nil {
			return fmt.Errorf("create staff user desk: %w", err)
		}
		if _, err := staff.Create(tx, staff.NewUser{Username: "admin", DisplayName: "Avery Admin", Password: "admin", Role: staff.RoleAdmin, BranchCode: "CEN"}); err != nil {
			return fmt.Errorf("create staff user admin: %w", err)
		}
		lib.deskID = desk.ID
		lib.generate()
		if err := lib.writeData(tx); err != nil {
			return err
		}
		if err := writeSIP(tx); err != nil {
			return err
		}
		sum = lib.summary()
		return tx.Audit(stacks.System, "demo.create", "", 0,
			fmt.Sprintf("%d titles, %d items, %d patrons, %d loans, %d holds", sum.Records, sum.Items, sum.Patrons, sum.Loans, sum.Holds))
	})
	if err != nil {
		return Summary{}, fmt.Errorf("create the demo library: %w", err)
	}
	// Today's notices, so that the queue has messages to show (they stay
	// pending: the demo has no mail relay).
	// No desk works yet: the run need not leave the writer to anyone.
	res, err := notices.RunDaily(ctx, d, notices.RunOptions{Pace: -1})
	if err != nil {
		return Summary{}, fmt.Errorf("the demo library's notices: %w", err)
	}
	sum.Notices = res.Messages
	// The report statistics, as stacks serve would roll them up a minute later.
	if _, err := reports.Rollup(ctx, d); err != nil {
		return Summary{}, fmt.Errorf("the demo library's report statistics: %w", err)
	}
	return sum, nil
}

// library is the demo library being generated, in memory, before it is written.
type library struct {
	opt    Options
	today  time.Time // midnight UTC of the day the library is created
	rng    *rand.Rand
	cal    *calendar
	rules  []rule
	deskID int64

	records []*record
	items   []*item
	patrons []*patron
	loans   []*loan
	ledger  []*entry
	holds   []*hold
}

func newLibrary(now time.Time, opt Options) *library {
	today := dayOf(now)
	return &library{
		opt:   opt,
		today: today,
		rng:   rand.New(rand.NewPCG(seed1, seed2)),
		cal:   newCalendar(today, []int64{branchCEN, branchEAS, branchWES}),
		rules: demoRules,
	}
}

// generate builds the whole library in memory, in a fixed order, drawing from one
// random source.
func (l *library) generate() {
	l.fixtureCatalogue()
	l.generatedCatalogue()
	l.fixturePatrons()
	l.generatedPatrons()
	l.fixtureHistory()
	l.waitingHolds()
	l.queuedHolds()
	l.currentLoans()
	l.loanHistory()
	l.number()
}

func (l *library) summary() Summary {
	s := Summary{Branches: 3, Staff: 2, Patrons: len(l.patrons), Records: len(l.records), Items: len(l.items), Holds: len(l.holds)}
	for _, ln := range l.loans {
		if ln.current() {
			s.Loans++
			if ln.due.Before(l.today) {
				s.Overdue++
			}
		}
	}
	return s
}

// rule is one row of circ_rules; a zero id is a wildcard.
type rule struct {
	cat, typ, branch int64
	period           int
	maxLoans         int
	renewals         int
	fine, cap        int
	pickupDays       int
}

// demoRules are the circulation rules: Book 21 days, 2 renewals, 0.25 a day up to
// 5.00; DVD 7 days, 1 renewal, 1.00 a day up to 10.00; Reference not for loan; and
// narrower rules for children (10 books at a time; 2 DVDs at 0.50 a day), so that
// "the most specific match wins" has something to choose between.
var demoRules = []rule{
	{period: 21, maxLoans: 20, renewals: 2, fine: 25, cap: 500, pickupDays: 7},
	{typ: typeBook, period: 21, maxLoans: 20, renewals: 2, fine: 25, cap: 500, pickupDays: 7},
	{typ: typeDVD, period: 7, maxLoans: 5, renewals: 1, fine: 100, cap: 1000, pickupDays: 7},
	{typ: typeRef, period: 0, maxLoans: 0, renewals: 0, fine: 0, cap: 0, pickupDays: 7},
	{cat: catChild, typ: typeBook, period: 21, maxLoans: 10, renewals: 2, fine: 25, cap: 500, pickupDays: 7},
	{cat: catChild, typ: typeDVD, period: 7, maxLoans: 2, renewals: 1, fine: 50, cap: 500, pickupDays: 7},
}

// ruleFor returns the most specific rule that matches: a category match outweighs an
// item type match, which outweighs a branch match. The circulation package owns the
// real lookup; the demo rules never tie, so any sensible precedence agrees.
func (l *library) ruleFor(cat, typ, branch int64) rule {
	best, bestScore := rule{}, -1
	for _, r := range l.rules {
		if (r.cat != 0 && r.cat != cat) || (r.typ != 0 && r.typ != typ) || (r.branch != 0 && r.branch != branch) {
			continue
		}
		score := 0
		if r.cat != 0 {
			score += 4
		}
		if r.typ != 0 {
			score += 2
		}
		if r.branch != 0 {
			score++
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	return best
}

// maxLoans is how many current loans the demo gives a patron at most.
func maxLoans(cat int64) int {
	if cat == catChild {
		return 10
	}
	return 20
}

// maxHolds matches patron_categories.max_holds.
func maxHolds(cat int64) int {
	switch cat {
	case catChild:
		return 5
	case catStaff:
		return 20
	}
	return 10
}
