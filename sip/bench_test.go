package sip_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
)

// BenchmarkCheckin times checkin round trips over loopback, as a sorter sees them:
// from writing the request to reading the whole answer, on the default demo library
// (2,010 titles, 500 patrons) with the server on 127.0.0.1. Each terminal has its
// own connection, patron and two items; it checks an item out (not timed) and in
// (timed), over and over. b.N is the number of checkins across all terminals.
//
// Reported: the median and 99th percentile checkin round trip, and messages per
// second (checkouts and checkins) over the whole run. ns/op is the wall time per
// checkout-and-checkin pair, all terminals together. Side by side: the log level
// at info and at debug (each message logged, to a discarding handler, so the cost
// is building and formatting the record), one terminal and 50, SQLite's synchronous
// FULL (durable, the default) and NORMAL, and group commit (the default: writes that
// arrive together share one durable commit) against a commit for each message.
// make sip-bench runs it.
func BenchmarkCheckin(b *testing.B) {
	for _, bc := range []struct {
		terminals  int
		level      slog.Level
		sync       string
		commitEach bool
	}{
		{1, slog.LevelInfo, "FULL", false},
		{1, slog.LevelDebug, "FULL", false},
		{50, slog.LevelInfo, "FULL", false},
		{50, slog.LevelInfo, "FULL", true},
		{1, slog.LevelInfo, "NORMAL", false},
		{50, slog.LevelInfo, "NORMAL", false},
	} {
		commit := "group"
		if bc.commitEach {
			commit = "each"
		}
		name := fmt.Sprintf("terminals=%d/log=%s/sync=%s/commit=%s", bc.terminals, strings.ToLower(bc.level.String()), bc.sync, commit)
		opt := db.Options{Synchronous: bc.sync, CommitEach: bc.commitEach}
		b.Run(name, func(b *testing.B) { benchCheckin(b, bc.terminals, bc.level, opt) })
	}
}

func benchCheckin(b *testing.B, terminals int, level slog.Level, dopt db.Options) {
	// Every terminal connects from 127.0.0.1: allow them all.
	e := newEnvWith(b, envOptions{demo: demo.Options{}, db: dopt, logLevel: level, config: sip.Config{MaxConnsPerAddr: terminals}})
	// Items no hold wants, at home here, and patrons who may borrow them.
	items := queryRows(b, e.d, `SELECT i.barcode FROM items i
		WHERE i.status = 'available' AND i.home_branch_id = 1 AND i.current_branch_id = 1 AND i.item_type_id = 1
		AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id LIMIT ?`, 2*terminals)
	cards := queryRows(b, e.d, `SELECT p.card FROM patrons p
		WHERE p.blocked = 0 AND p.expires_on > '2027-01-01' AND p.category_id = 1
		AND (SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = p.id) <= 0
		AND (SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL) < 15
		ORDER BY p.id LIMIT ?`, terminals)
	if len(items) < 2*terminals || len(cards) < terminals {
		b.Fatalf("the demo library has %d suitable items and %d patrons; want %d and %d", len(items), len(cards), 2*terminals, terminals)
	}
	clients := make([]*sip.Client, terminals)
	for i := range clients {
		clients[i] = e.client()
	}

	latencies := make([][]time.Duration, terminals)
	var wg sync.WaitGroup
	errs := make(chan error, terminals)
	b.ResetTimer()
	start := time.Now()
	for t := range terminals {
		n := b.N / terminals
		if t < b.N%terminals {
			n++
		}
		card := strings.TrimPrefix(cards[t], "card=")
		mine := []string{strings.TrimPrefix(items[2*t], "barcode="), strings.TrimPrefix(items[2*t+1], "barcode=")}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[t]
			lat := make([]time.Duration, 0, n)
			for i := range n {
				barcode := mine[i%2]
				if resp, err := c.Send(checkoutMsg(card, barcode)); err != nil || !strings.HasPrefix(resp, "121") {
					errs <- fmt.Errorf("checkout %s to %s: %q %v", barcode, card, resp, err)
					return
				}
				t0 := time.Now()
				resp, err := c.Send(checkinMsg(barcode))
				lat = append(lat, time.Since(t0))
				if err != nil || !strings.HasPrefix(resp, "101") {
					errs <- fmt.Errorf("checkin %s: %q %v", barcode, resp, err)
					return
				}
			}
			latencies[t] = lat
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[min(len(all)-1, len(all)*99/100)].Microseconds()), "p99-µs")
	b.ReportMetric(float64(2*len(all))/elapsed.Seconds(), "msgs/s")
}

// TestDebugLogOff: with the level at info no per-message record reaches the
// handler, since none is built; at debug each message is logged with its answer.
func TestDebugLogOff(t *testing.T) {
	h := &countingHandler{level: slog.LevelInfo}
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{Logger: slog.New(h)}})
	c := e.client()
	send(t, c, checkoutMsg("P0001", "I00001"))
	send(t, c, checkinMsg("I00001"))
	if n := h.debugRecords(); n != 0 {
		t.Errorf("%d debug records reached the handler with the level at info", n)
	}

	h = &countingHandler{level: slog.LevelDebug}
	e = newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{Logger: slog.New(h)}})
	c = e.client()
	send(t, c, checkinMsg("I00001"))
	// The record is written after the answer is sent.
	waittest.For(t, "the check-in's debug record", func() bool { return strings.Contains(h.last(), "request=09N") })
	if n := h.debugRecords(); n < 2 {
		t.Errorf("%d debug records with the level at debug; want one per message", n)
	}
	if got := h.last(); !strings.Contains(got, "request=09N") || !strings.Contains(got, "response=100YUY") {
		t.Errorf("last debug record: %s", got)
	}
}

// countingHandler counts the records it is given, above its level.
type countingHandler struct {
	level slog.Level
	mu    sync.Mutex
	debug int
	text  string
}

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Level == slog.LevelDebug {
		h.debug++
	}
	var sb strings.Builder
	sb.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		sb.WriteString(" " + a.String())
		return true
	})
	h.text = sb.String()
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
func (h *countingHandler) debugRecords() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.debug
}
func (h *countingHandler) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.text
}
