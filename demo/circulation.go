package demo

import (
	"fmt"
	"slices"
	"time"
)

// loan is a current loan (returned zero) or a returned one.
type loan struct {
	id           int64
	item         *item
	patron       *patron
	branch       int64
	issued       time.Time
	due          time.Time
	renewals     int
	returned     time.Time
	returnBranch int64
}

func (ln *loan) current() bool { return ln.returned.IsZero() }

// entry is a ledger row: charges positive, payments and waivers negative. The desk
// account made all of them.
type entry struct {
	id     int64
	patron *patron
	kind   string
	amount int
	loan   *loan
	desc   string
	at     time.Time
}

// hold is an open hold on a record: queued, or waiting on the hold shelf with the
// trapped copy.
type hold struct {
	id           int64
	rec          *record
	patron       *patron
	pickup       int64
	placed       time.Time
	priority     int
	status       string
	trapped      *item
	waitingSince time.Time
	pickupBy     time.Time
	byStaff      bool
}

// Shares of the generated catalogue that circulates: few enough loans that a load
// test finds most copies available.
const (
	loanPercent    = 12 // current loans, per 100 loanable generated copies
	overduePercent = 18 // overdue, per 100 current loans
	latePercent    = 10 // returned late, per 100 returned loans
	historyDays    = 450
)

// openTime returns a random instant in opening hours (09:00 to 19:30) on day.
func (l *library) openTime(day time.Time) time.Time {
	return day.Add(9*time.Hour + time.Duration(l.rng.IntN(10*3600+1800))*time.Second)
}

// between returns a random instant in [from, to), or from if the span is empty.
func (l *library) between(from, to time.Time) time.Time {
	span := int64(to.Sub(from) / time.Second)
	if span <= 0 {
		return from
	}
	return from.Add(time.Duration(l.rng.Int64N(span)) * time.Second)
}

// patronWhere returns a random generated patron for whom ok holds, or nil when
// a fair number of tries finds none.
func (l *library) patronWhere(ok func(*patron) bool) *patron {
	n := len(l.patrons) - fixturePatrons
	if n <= 0 {
		return nil
	}
	for try := 0; try < 200; try++ {
		p := l.patrons[fixturePatrons+l.rng.IntN(n)]
		if ok(p) {
			return p
		}
	}
	return nil
}

// itemWhere returns a random item for which ok holds, scanning every item from a
// random start, or nil if there is none.
func (l *library) itemWhere(ok func(*item) bool) *item {
	start := l.rng.IntN(len(l.items))
	for i := range l.items {
		if it := l.items[(start+i)%len(l.items)]; ok(it) {
			return it
		}
	}
	return nil
}

// lendNow gives it a current loan, overdue or not, to a random patron who may have
// it, and returns the loan; nil if it finds no such patron. One loan in five has
// been renewed once.
func (l *library) lendNow(it *item, overdue bool) *loan {
	p := l.patronWhere(func(p *patron) bool { return p.canBorrowNow(l.today, it.rec) })
	if p == nil {
		return nil
	}
	r := l.ruleFor(p.cat, it.typ, it.branch)
	// k days ago the loan was issued or last renewed.
	k := 1 + l.rng.IntN(r.period-1)
	if overdue {
		k = r.period + 1 + l.rng.IntN(45)
	}
	var start, due time.Time
	for {
		start = l.cal.prevOpen(it.branch, l.today.AddDate(0, 0, -k))
		due = l.cal.dueDay(it.branch, start, r.period)
		if overdue && due.Before(l.today) || !overdue && due.After(l.today) {
			break
		}
		if overdue {
			k++
		} else {
			k = max(k-1, 1)
		}
	}
	issue, renewals := start, 0
	if r.renewals > 0 && l.rng.IntN(100) < 20 {
		issue = l.cal.prevOpen(it.branch, start.AddDate(0, 0, -(3+l.rng.IntN(r.period-2))))
		renewals = 1
	}
	ln := &loan{item: it, patron: p, branch: it.branch, issued: l.openTime(issue), due: closing(due), renewals: renewals}
	l.loans = append(l.loans, ln)
	it.status, it.updated, it.busyFrom = "on_loan", ln.issued, issue
	p.loans++
	p.busy[it.rec.id] = true
	return ln
}

// returnedLoan records a loan of it to p issued on issue, due by the rule, and
// returned on ret at returnBranch, with its overdue fine if it came back late.
func (l *library) returnedLoan(it *item, p *patron, r rule, issue, ret time.Time, returnBranch int64) *loan {
	due := l.cal.dueDay(it.branch, issue, r.period)
	ln := &loan{
		item: it, patron: p, branch: it.branch, issued: l.openTime(issue), due: closing(due),
		returned: l.openTime(ret), returnBranch: returnBranch,
	}
	l.loans = append(l.loans, ln)
	if late := daysBetween(due, ret); late > 0 {
		l.fine(ln, r, late)
	}
	return ln
}

// fine charges the overdue fine of a late return. Generated patrons paid 70% of
// their fines on the spot and 12% later, had 6% waived and still owe the rest, so
// that a few of them are over the fines limit.
func (l *library) fine(ln *loan, r rule, late int) {
	amount := min(late*r.fine, r.cap)
	if amount <= 0 {
		return
	}
	charge := &entry{patron: ln.patron, kind: "overdue", amount: amount, loan: ln, at: ln.returned,
		desc: fmt.Sprintf("Overdue: %s (%d %s late)", ln.item.rec.title, late, plural(late, "day", "days"))}
	l.ledger = append(l.ledger, charge)
	if ln.patron.fixture {
		return
	}
	switch k := l.rng.IntN(100); {
	case k < 70:
		l.ledger = append(l.ledger, &entry{patron: ln.patron, kind: "payment", amount: -amount, loan: ln,
			at: ln.returned.Add(time.Duration(30+l.rng.IntN(300)) * time.Second), desc: "Paid at the desk"})
	case k < 82:
		day := l.cal.nextOpen(ln.returnBranch, dayOf(ln.returned).AddDate(0, 0, 1+l.rng.IntN(20)))
		if day.Before(l.today) {
			l.ledger = append(l.ledger, &entry{patron: ln.patron, kind: "payment", amount: -amount, loan: ln,
				at: l.openTime(day), desc: "Paid at the desk"})
		}
	case k < 88:
		l.ledger = append(l.ledger, &entry{patron: ln.patron, kind: "waiver", amount: -amount, loan: ln,
			at: ln.returned.Add(time.Duration(30+l.rng.IntN(300)) * time.Second), desc: "Waived: first late return"})
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fixtureHistory gives the fixture patrons their past: Blake Owing's three late
// returns whose fines make exactly 12.50, still unpaid; a few returns for Dana
// Expired before the card ran out; and Emery Barred's damage charge. Their items are
// generated copies kept out of everything else, so they are available now.
func (l *library) fixtureHistory() {
	owing, expired, barred := l.patrons[1], l.patrons[3], l.patrons[4]
	books := l.reservable(typeBook)
	dvds := l.reservable(typeDVD)

	// 2.50 + 6.00 + 4.00 = 12.50 with a DVD; 2.50 + 5.00 + 5.00 without one.
	plan := []struct {
		ok   func(*item) bool
		fine int
	}{{books, 250}, {dvds, 600}, {books, 400}}
	if l.itemWhere(dvds) == nil {
		plan[1], plan[2] = plan[0], plan[0]
		plan[1].fine, plan[2].fine = 500, 500
	}
	for j, step := range plan {
		if it := l.reserve(step.ok); it != nil {
			r := l.ruleFor(owing.cat, it.typ, it.branch)
			l.fixtureLoan(it, owing, r, 15+25*j, step.fine/r.fine)
		}
	}
	for j := 0; j < 2; j++ {
		if it := l.reserve(books); it != nil {
			l.fixtureLoan(it, expired, l.ruleFor(expired.cat, it.typ, it.branch), 100+60*j, 0)
		}
	}
	for j := 0; j < 2; j++ {
		if it := l.reserve(books); it != nil {
			ln := l.fixtureLoan(it, barred, l.ruleFor(barred.cat, it.typ, it.branch), 30+40*j, 0)
			if j == 0 {
				l.ledger = append(l.ledger, &entry{patron: barred, kind: "fee", amount: 500, loan: ln,
					at: ln.returned.Add(5 * time.Minute), desc: "Damage: water-damaged pages, " + it.rec.title})
			}
		}
	}
}

// reservable returns the test for items a fixture patron's history may use: an
// available generated copy of type typ, acquired more than a year ago.
func (l *library) reservable(typ int64) func(*item) bool {
	longAgo := l.today.AddDate(-1, 0, 0)
	return func(it *item) bool {
		return it.typ == typ && it.status == "available" && !it.rec.fixture && !it.reserved && it.created.Before(longAgo)
	}
}

// reserve takes an item for a fixture patron's history, or nil if none is left;
// Options keeps the catalogue large enough that there always is one.
func (l *library) reserve(ok func(*item) bool) *item {
	it := l.itemWhere(ok)
	if it != nil {
		it.reserved = true
	}
	return it
}

// fixtureLoan records a returned loan about daysAgo days ago, late exactly
// lateDays days (on time if 0), with issue, due and return all on open days.
func (l *library) fixtureLoan(it *item, p *patron, r rule, daysAgo, lateDays int) *loan {
	for s := 0; ; s++ {
		ret := l.today.AddDate(0, 0, -(daysAgo + s))
		due := ret.AddDate(0, 0, -lateDays)
		if lateDays == 0 {
			due = ret.AddDate(0, 0, 4)
		}
		issue := due.AddDate(0, 0, -r.period)
		if l.cal.open(it.branch, ret) && l.cal.open(it.branch, due) && l.cal.open(it.branch, issue) {
			return l.returnedLoan(it, p, r, issue, ret, it.branch)
		}
	}
}

// waitingHolds makes about one hold in 150 titles ready for pickup: the trapped copy
// came back in the last few days and sits on the hold shelf at its branch; the
// title's other copy, if any, is on loan; a few queued holds may wait behind.
func (l *library) waitingHolds() {
	want := max(1, l.opt.Titles/150)
	for made, tries := 0, 0; made < want && tries < 50*want; tries++ {
		rec := l.holdRecord(2)
		if rec == nil {
			return
		}
		holder := l.patronWhere(func(p *patron) bool { return p.canHold(l.today, rec) })
		if holder == nil {
			return
		}
		trapped := rec.items[l.rng.IntN(len(rec.items))]
		rec.held = true
		holder.busy[rec.id] = true
		ok := true
		for _, it := range rec.items {
			if it != trapped && l.lendNow(it, l.rng.IntN(100) < 25) == nil {
				ok = false
			}
		}
		if !ok {
			delete(holder.busy, rec.id)
			continue
		}

		// The loan that came back and filled the hold.
		back := l.cal.prevOpen(trapped.branch, l.today.AddDate(0, 0, -(1+l.rng.IntN(4))))
		prev := l.patronWhere(func(p *patron) bool { return p != holder && p.expires.After(back) })
		if prev == nil {
			delete(holder.busy, rec.id)
			continue
		}
		r := l.ruleFor(prev.cat, trapped.typ, trapped.branch)
		issue := l.cal.prevOpen(trapped.branch, back.AddDate(0, 0, -(3+l.rng.IntN(r.period-2))))
		ln := l.returnedLoan(trapped, prev, r, issue, back, trapped.branch)

		h := &hold{
			rec: rec, patron: holder, pickup: trapped.branch, priority: 0, status: "waiting",
			placed:       l.between(ln.issued.Add(time.Hour), ln.returned.Add(-time.Hour)),
			trapped:      trapped,
			waitingSince: ln.returned.Add(time.Duration(20+l.rng.IntN(600)) * time.Second),
		}
		h.byStaff = l.placedAtDesk(h)
		pickupDays := l.ruleFor(holder.cat, trapped.typ, trapped.branch).pickupDays
		h.pickupBy = closing(l.cal.nextOpen(h.pickup, dayOf(h.waitingSince).AddDate(0, 0, pickupDays)))
		l.holds = append(l.holds, h)
		holder.holds++
		trapped.status, trapped.updated, trapped.busyFrom = "on_hold_shelf", h.waitingSince, issue
		l.queue(rec, h.placed, l.rng.IntN(3), 1)
		made++
	}
}

// placedAtDesk decides whether staff placed h at the desk, rather than the patron
// online: about half of the holds placed while the pickup branch was open.
func (l *library) placedAtDesk(h *hold) bool {
	desk := l.rng.IntN(2) == 0
	day := dayOf(h.placed)
	hour := h.placed.Sub(day)
	return desk && l.cal.open(h.pickup, day) && hour >= 9*time.Hour && hour < closesAt
}

// queuedHolds makes about one title in 50 wanted: all its copies on loan and one to
// four patrons queued for it.
func (l *library) queuedHolds() {
	want := max(1, l.opt.Titles/50)
	for made, tries := 0, 0; made < want && tries < 50*want; tries++ {
		rec := l.holdRecord(3)
		if rec == nil {
			return
		}
		rec.held = true
		var latest time.Time
		ok := true
		for _, it := range rec.items {
			ln := l.lendNow(it, l.rng.IntN(100) < 25)
			if ln == nil {
				ok = false
				break
			}
			if ln.issued.After(latest) {
				latest = ln.issued
			}
		}
		if !ok {
			continue
		}
		if l.queue(rec, latest, 1+l.rng.IntN(4), 1) > 0 {
			made++
		}
	}
}

// queue places n queued holds on rec after the instant after, numbered from first
// in the order they were placed, and returns how many it placed.
func (l *library) queue(rec *record, after time.Time, n, first int) int {
	var q []*hold
	for i := 0; i < n; i++ {
		p := l.patronWhere(func(p *patron) bool { return p.canHold(l.today, rec) })
		if p == nil {
			break
		}
		p.holds++
		p.busy[rec.id] = true
		pickup := p.branch
		if l.rng.IntN(5) == 0 {
			pickup = []int64{branchCEN, branchEAS, branchWES}[l.rng.IntN(3)]
		}
		h := &hold{rec: rec, patron: p, pickup: pickup, status: "queued", placed: l.between(after.Add(10*time.Minute), l.today)}
		h.byStaff = l.placedAtDesk(h)
		q = append(q, h)
	}
	slices.SortStableFunc(q, func(a, b *hold) int { return a.placed.Compare(b.placed) })
	for i, h := range q {
		h.priority = first + i
	}
	l.holds = append(l.holds, q...)
	return len(q)
}

// holdRecord returns a random generated, loanable title of at most maxCopies copies,
// all of them available, that has no holds yet.
func (l *library) holdRecord(maxCopies int) *record {
	gen := l.records[len(fixtureTitles):]
	for try := 0; try < 200; try++ {
		rec := gen[l.rng.IntN(len(gen))]
		if rec.held || rec.typ == typeRef || len(rec.items) > maxCopies {
			continue
		}
		free := true
		for _, it := range rec.items {
			free = free && it.status == "available" && it.loanable()
		}
		if free {
			return rec
		}
	}
	return nil
}

// currentLoans lends generated copies until loanPercent of them are on loan,
// overduePercent of the new loans overdue.
func (l *library) currentLoans() {
	loanable, onLoan := 0, 0
	for _, it := range l.items {
		if it.loanable() {
			loanable++
		}
		if it.status == "on_loan" {
			onLoan++
		}
	}
	want := loanable * loanPercent / 100
	for tries := 0; onLoan < want && tries < 30*want; tries++ {
		it := l.items[l.rng.IntN(len(l.items))]
		if !it.loanable() || it.status != "available" || it.rec.held {
			continue
		}
		if l.lendNow(it, l.rng.IntN(100) < overduePercent) != nil {
			onLoan++
		}
	}
}

// loanHistory gives generated copies their returned loans of the last historyDays
// days, none to five each, one in latePercent returned late. Each runs back in
// time from the copy's current loan, or from today.
func (l *library) loanHistory() {
	oldest := l.today.AddDate(0, 0, -historyDays)
	for _, it := range l.items {
		if !it.loanable() {
			continue
		}
		n := []int{0, 0, 0, 1, 1, 1, 2, 2, 3, 5}[l.rng.IntN(10)]
		cursor := it.busyFrom
		if cursor.IsZero() {
			cursor = l.today
		}
		since := dayOf(it.created).AddDate(0, 0, 1)
		if since.Before(oldest) {
			since = oldest
		}
		for i := 0; i < n; i++ {
			returnBranch := it.branch
			if l.rng.IntN(100) < 15 {
				returnBranch = []int64{branchCEN, branchEAS, branchWES}[l.rng.IntN(3)]
			}
			ret := l.cal.prevOpen(returnBranch, cursor.AddDate(0, 0, -(1+l.rng.IntN(30))))
			p := l.patronWhere(func(p *patron) bool { return p.expires.After(ret) })
			if p == nil {
				break
			}
			r := l.ruleFor(p.cat, it.typ, it.branch)
			d := 1 + l.rng.IntN(r.period)
			if l.rng.IntN(100) < latePercent {
				d = r.period + 1 + l.rng.IntN(25)
			}
			issue := l.cal.prevOpen(it.branch, ret.AddDate(0, 0, -d))
			if issue.Before(since) {
				break
			}
			l.returnedLoan(it, p, r, issue, ret, returnBranch)
			cursor = issue
		}
	}
}

// number gives loans, ledger entries and holds their ids in the order they
// happened, as a library that had run for years would have them.
func (l *library) number() {
	slices.SortStableFunc(l.loans, func(a, b *loan) int { return a.issued.Compare(b.issued) })
	for i, ln := range l.loans {
		ln.id = int64(i + 1)
	}
	slices.SortStableFunc(l.ledger, func(a, b *entry) int { return a.at.Compare(b.at) })
	for i, e := range l.ledger {
		e.id = int64(i + 1)
	}
	slices.SortStableFunc(l.holds, func(a, b *hold) int { return a.placed.Compare(b.placed) })
	for i, h := range l.holds {
		h.id = int64(i + 1)
	}
}
