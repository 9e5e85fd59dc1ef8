package demo

import (
	"fmt"
	"strings"
	"time"
)

// patron is a library member.
type patron struct {
	id        int64
	card      string
	surname   string
	first     string
	email     string
	phone     string
	address   string
	cat       int64
	branch    int64
	expires   time.Time
	blocked   bool
	blockNote string
	notes     string
	created   time.Time
	fixture   bool

	loans int            // current loans
	holds int            // open holds
	busy  map[int64]bool // records the patron has on loan or on hold now
}

// expired reports whether the card has expired by today.
func (p *patron) expired(today time.Time) bool { return !p.expires.After(today) }

// canBorrowNow is whether the demo may give p a current loan: only generated
// patrons with a valid card (a block may have come after the loan).
func (p *patron) canBorrowNow(today time.Time, rec *record) bool {
	return !p.fixture && !p.expired(today) && p.loans < maxLoans(p.cat) && !p.busy[rec.id]
}

// canHold is whether the demo may give p an open hold on rec.
func (p *patron) canHold(today time.Time, rec *record) bool {
	return !p.fixture && !p.blocked && !p.expired(today) && p.holds < maxHolds(p.cat) && !p.busy[rec.id]
}

// blockedFixtureNote is P0005's block note, which the desk shows when it refuses.
const blockedFixtureNote = "Repeated damage to items; see the branch manager before lending."

// fixturePatrons adds P0001 to P0005, the desk scenario's patrons, all adults at
// Central. Their cards are valid for two more years except Dana Expired's, which
// expired 45 days ago.
func (l *library) fixturePatrons() {
	valid := l.today.AddDate(2, 0, 0)
	fixtures := []struct {
		first, surname string
		expires        time.Time
		note           string
	}{
		{"Alex", "Reader", valid, ""},
		{"Blake", "Owing", valid, ""},
		{"Casey", "Waiting", valid, ""},
		{"Dana", "Expired", l.today.AddDate(0, 0, -45), ""},
		{"Emery", "Barred", valid, blockedFixtureNote},
	}
	for i, f := range fixtures {
		p := &patron{
			id: int64(i + 1), card: fmt.Sprintf("P%04d", i+1), surname: f.surname, first: f.first,
			email:   strings.ToLower(f.first+"."+f.surname) + "@example.org",
			phone:   fmt.Sprintf("555-01%02d", i+1),
			address: fmt.Sprintf("%d Library Lane, Centre Town", 10+2*i),
			cat:     catAdult, branch: branchCEN, expires: f.expires,
			blocked: f.note != "", blockNote: f.note,
			created: l.today.AddDate(-3, 0, 0).Add(11 * time.Hour), fixture: true,
			busy: map[int64]bool{},
		}
		l.patrons = append(l.patrons, p)
	}
}

// generatedPatrons adds patrons up to opt.Patrons: 79% adults, 18% children, 3%
// staff; about 45% at Central; 4% with expired cards and 2% blocked.
func (l *library) generatedPatrons() {
	rng := l.rng
	for n := len(l.patrons) + 1; n <= l.opt.Patrons; n++ {
		p := &patron{id: int64(n), card: fmt.Sprintf("P%04d", n), busy: map[int64]bool{}}
		p.surname, p.first = pick(rng, surnames), pick(rng, forenames)
		switch k := rng.IntN(100); {
		case k < 79:
			p.cat = catAdult
		case k < 97:
			p.cat = catChild
		default:
			p.cat = catStaff
		}
		p.branch = []int64{branchCEN, branchCEN, branchCEN, branchCEN, branchCEN, branchEAS, branchEAS, branchEAS, branchWES, branchWES}[rng.IntN(10)]
		if p.cat != catChild || rng.IntN(2) == 0 {
			domain := []string{"example.org", "example.com", "example.net"}[rng.IntN(3)]
			p.email = fmt.Sprintf("%s.%s%d@%s", letters(p.first), letters(p.surname), rng.IntN(90)+10, domain)
		}
		p.phone = fmt.Sprintf("555-01%02d", rng.IntN(100))
		p.address = fmt.Sprintf("%d %s, %s", 1+rng.IntN(180), pick(rng, streets), pick(rng, towns[p.branch]))
		p.created = l.today.AddDate(0, 0, -(460 + rng.IntN(2500))).Add(time.Duration(9*3600+rng.IntN(10*3600)) * time.Second)
		if rng.IntN(100) < 4 {
			p.expires = l.today.AddDate(0, 0, -(1 + rng.IntN(200)))
		} else {
			p.expires = l.today.AddDate(0, 0, 60+rng.IntN(670))
		}
		if rng.IntN(100) < 2 {
			p.blocked = true
			p.blockNote = pick(rng, blockNotes)
		}
		if rng.IntN(100) < 5 {
			p.notes = pick(rng, patronNotes)
		}
		l.patrons = append(l.patrons, p)
	}
}

// letters lower-cases s and keeps only its ASCII letters, for e-mail addresses.
func letters(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
