package hardening

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// op is one checkout or checkin a desk sent, and what it saw.
type op struct {
	checkout bool
	acked    bool // answered 303: the desk saw it done
}

// item is one copy a desk lends and takes back, with the history the desk saw.
type item struct {
	barcode  string
	id       int64
	patronID int64
	ops      []op
	// Baseline: the item's loans, and returned loans, before this round.
	loans, returned int
	onLoan          bool
}

// deskLoad is one desk serving one patron: it checks its items out and in again,
// round after round, until the server dies.
type deskLoad struct {
	card  string
	items []*item
	// gone: the last run ended because a request got no answer (the server
	// was killed), not because stop was closed or the server answered wrong.
	gone bool
	// onAck, if set, is called after each acknowledged operation.
	onAck func()
}

// TestCrashRecovery kills the server with SIGKILL while several desks check items
// out and in, restarts it on the same database, and proves that nothing a desk saw
// acknowledged (a 303 answer) was lost: every acknowledged checkout is a loan in the
// database, every acknowledged checkin a returned loan, and each item is where the
// last acknowledged operation left it. The one request each desk had in flight at
// the kill may or may not have happened, and nothing else. SQLite's integrity
// check and foreign key check pass, and so do stacks check's invariants. Under make
// soak there are more desks and several kills in a row on the same database.
func TestCrashRecovery(t *testing.T) {
	path := newDB(t)
	desks := scale(4, 8)
	perDesk := 6
	rounds := scale(1, 6)
	loads := chooseLoads(t, path, desks, perDesk)

	for round := 0; round < rounds; round++ {
		readBaseline(t, path, loads)
		s := startServer(t, path)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []string
		acked := 0
		acks := map[*deskLoad]int{}
		ackedCh := make(chan struct{}, 1)
		for _, l := range loads {
			l.onAck = func() {
				mu.Lock()
				acks[l]++
				mu.Unlock()
				select {
				case ackedCh <- struct{}{}:
				default:
				}
			}
		}
		for _, l := range loads {
			wg.Add(1)
			go func(l *deskLoad) {
				defer wg.Done()
				n, err := l.run(s.Base, nil)
				mu.Lock()
				acked += n
				if err != "" {
					errs = append(errs, err)
				}
				mu.Unlock()
			}(l)
		}
		// Let the desks work, then pull the plug: once every desk has had
		// enough operations acknowledged (a fixed time was too short on a
		// loaded machine: desks still signing in at the kill), or after a
		// minute whatever they did.
		limit := time.After(time.Minute)
		for enough := false; !enough; {
			select {
			case <-ackedCh:
			case <-limit:
				enough = true
			}
			mu.Lock()
			enough = enough || minAcks(acks, loads) >= 10
			mu.Unlock()
		}
		time.Sleep(scale(0, 2*time.Second)) // under make soak, the desks work on a while before the plug is pulled
		s.kill()
		wg.Wait()
		for _, e := range errs {
			t.Errorf("round %d: %s", round, e)
		}
		if acked < 10*desks {
			t.Errorf("round %d: only %d operations acknowledged before the kill; the load was too light to prove anything", round, acked)
		}

		// The server starts again on the database the crash left, and stops cleanly.
		s = startServer(t, path)
		if err := s.terminate(t); err != nil {
			t.Fatalf("round %d: stacks serve after recovery, then SIGTERM: %v", round, err)
		}
		verify(t, round, path, loads)
		out, err := runStacks(t, "check", "--db", path)
		if err != nil {
			t.Fatalf("round %d: stacks check after the crash: %v\n%s", round, err, out)
		}
		t.Logf("round %d: %d operations acknowledged before SIGKILL, all found after restart; stacks check: %s", round, acked, strings.TrimPrefix(strings.TrimSpace(out), path+": "))
	}
}

// chooseLoads picks, for each desk, a patron in good standing with no loans and
// items of their own: books at Central, available, whose titles have no holds.
func chooseLoads(t *testing.T, path string, desks, perDesk int) []*deskLoad {
	t.Helper()
	d := openDB(t, path)
	defer d.Close()
	var loads []*deskLoad
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT p.card, p.id FROM patrons p JOIN patron_categories c ON c.id = p.category_id
			WHERE c.code = 'ADULT' AND p.blocked = 0 AND p.expires_on > ?
			  AND NOT EXISTS (SELECT 1 FROM loans l WHERE l.patron_id = p.id AND l.returned_at IS NULL)
			  AND coalesce((SELECT sum(amount_cents) FROM ledger g WHERE g.patron_id = p.id), 0) <= 0
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.patron_id = p.id AND h.status IN ('in_transit', 'waiting'))
			ORDER BY p.id LIMIT ?`, time.Now().AddDate(0, 0, 60).Format("2006-01-02"), desks)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			l := &deskLoad{}
			var id int64
			if err := rows.Scan(&l.card, &id); err != nil {
				rows.Close()
				return err
			}
			loads, ids = append(loads, l), append(ids, id)
		}
		rows.Close()
		rows, err = tx.Query(`SELECT i.barcode, i.id FROM items i JOIN item_types t ON t.id = i.item_type_id
			JOIN branches b ON b.id = i.home_branch_id
			WHERE t.code = 'BOOK' AND b.code = 'CEN' AND i.current_branch_id = i.home_branch_id AND i.status = 'available'
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
			ORDER BY i.id LIMIT ?`, desks*perDesk)
		if err != nil {
			return err
		}
		defer rows.Close()
		for n := 0; rows.Next(); n++ {
			it := &item{}
			if err := rows.Scan(&it.barcode, &it.id); err != nil {
				return err
			}
			if n/perDesk < len(loads) {
				it.patronID = ids[n/perDesk]
				loads[n/perDesk].items = append(loads[n/perDesk].items, it)
			}
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(loads) < desks {
		t.Fatalf("only %d patrons in good standing", len(loads))
	}
	for _, l := range loads {
		if len(l.items) < perDesk {
			t.Fatalf("only %d free items for desk %s", len(l.items), l.card)
		}
	}
	return loads
}

// readBaseline records each item's loans before a round, and whether it is out.
func readBaseline(t *testing.T, path string, loads []*deskLoad) {
	t.Helper()
	d := openDB(t, path)
	defer d.Close()
	for _, l := range loads {
		for _, it := range l.items {
			it.loans = queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ?`, it.id)
			it.returned = queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NOT NULL`, it.id)
			it.onLoan = it.loans > it.returned
			it.ops = nil
		}
	}
}

// run signs in, takes the patron, and checks the desk's items out and in until a
// request fails (the server was killed) or stop is closed. It returns the number of
// operations acknowledged, and a description of anything the live server got wrong.
func (l *deskLoad) run(base string, stop <-chan struct{}) (int, string) {
	d := newDesk(base)
	if _, err := d.dc.Login(context.Background(), "desk", "desk"); err != nil {
		return 0, fmt.Sprintf("desk %s: login: %v", l.card, err)
	}
	if status, _, err := d.post("/checkout/patron", url.Values{"card": {l.card}}); err != nil || status != http.StatusSeeOther {
		return 0, fmt.Sprintf("desk %s: take the patron: %d %v", l.card, status, err)
	}
	acked := 0
	l.gone = false
	for {
		for _, it := range l.items {
			select {
			case <-stop:
				return acked, ""
			default:
			}
			o := op{checkout: !it.onLoan}
			path := "/checkin"
			if o.checkout {
				path = "/checkout"
			}
			it.ops = append(it.ops, o)
			status, loc, err := d.post(path, url.Values{"barcode": {it.barcode}})
			if err != nil {
				// The server is gone: this operation is in flight, neither seen
				// done nor refused.
				l.gone = true
				return acked, ""
			}
			if status != http.StatusSeeOther {
				return acked, fmt.Sprintf("desk %s: %s %s: %d (to %q), want 303", l.card, path, it.barcode, status, loc)
			}
			it.ops[len(it.ops)-1].acked = true
			it.onLoan = o.checkout
			acked++
			if l.onAck != nil {
				l.onAck()
			}
		}
	}
}

// minAcks is the fewest operations any desk of loads had acknowledged.
func minAcks(acks map[*deskLoad]int, loads []*deskLoad) int {
	least := -1
	for _, l := range loads {
		if least < 0 || acks[l] < least {
			least = acks[l]
		}
	}
	return least
}

// verify checks, after the crash and restart, that the database holds every
// operation the desks saw acknowledged.
func verify(t *testing.T, round int, path string, loads []*deskLoad) {
	t.Helper()
	d := openDB(t, path)
	defer d.Close()
	if !d.Postgres() {
		var integrity string
		if err := d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
		}); err != nil || integrity != "ok" {
			t.Fatalf("round %d: integrity_check: %q, %v", round, integrity, err)
		}
	}
	for _, l := range loads {
		for _, it := range l.items {
			var ackOut, ackIn, flightOut, flightIn int
			for _, o := range it.ops {
				switch {
				case o.checkout && o.acked:
					ackOut++
				case o.checkout:
					flightOut++
				case o.acked:
					ackIn++
				default:
					flightIn++
				}
			}
			loans := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ?`, it.id) - it.loans
			returned := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NOT NULL`, it.id) - it.returned
			if loans < ackOut || loans > ackOut+flightOut {
				t.Errorf("round %d: item %s: %d checkouts acknowledged (%d in flight), %d loans made", round, it.barcode, ackOut, flightOut, loans)
			}
			if returned < ackIn || returned > ackIn+flightIn {
				t.Errorf("round %d: item %s: %d checkins acknowledged (%d in flight), %d loans returned", round, it.barcode, ackIn, flightIn, returned)
			}
			// Where the last acknowledged operation left the item, unless one in
			// flight after it may have moved it.
			last := -1
			for i, o := range it.ops {
				if o.acked {
					last = i
				}
			}
			if last < 0 || last < len(it.ops)-1 {
				continue
			}
			var patron sql.NullInt64
			var status string
			err := d.Read(context.Background(), func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT i.status, (SELECT patron_id FROM loans WHERE item_id = i.id AND returned_at IS NULL)
					FROM items i WHERE i.id = ?`, it.id).Scan(&status, &patron)
			})
			if err != nil {
				t.Fatal(err)
			}
			if it.ops[last].checkout && (status != "on_loan" || patron.Int64 != it.patronID) {
				t.Errorf("round %d: item %s was acknowledged checked out to %s, but is %s, lent to patron id %d", round, it.barcode, l.card, status, patron.Int64)
			}
			if !it.ops[last].checkout && (status != "available" || patron.Valid) {
				t.Errorf("round %d: item %s was acknowledged checked in, but is %s, lent to patron id %d", round, it.barcode, status, patron.Int64)
			}
		}
	}
}
