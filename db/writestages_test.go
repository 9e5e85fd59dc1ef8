package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestWriteStages: a write queued behind a slow one shows the wait in its
// queue stage, the slow one shows its own time in the run stage, and every
// stage counts each committed write once. Both engines.
func TestWriteStages(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			d := openCounterAt(t, target(t, e), db.Options{})
			ctx := context.Background()
			before := d.WriteStages()
			const slow = 60 * time.Millisecond
			held := make(chan struct{})
			errs := make(chan error, 2)
			go func() {
				errs <- d.Write(ctx, func(tx *db.Tx) error {
					close(held)
					time.Sleep(slow) // a slow write: the run stage must time it
					_, err := tx.Exec(`INSERT INTO rows (who, n) VALUES ('slow', 1)`)
					return err
				})
			}()
			<-held
			queued := time.Now()
			go func() {
				errs <- d.Write(ctx, func(tx *db.Tx) error {
					_, err := tx.Exec(`INSERT INTO rows (who, n) VALUES ('queued', 1)`)
					return err
				})
			}()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			// The queued write waited at least from its call to the slow
			// write's end (it cannot have been called before queued).
			wait := slow - time.Since(queued)
			after := d.WriteStages()
			if len(after) != len(db.WriteStageNames) {
				t.Fatalf("%d stages, want %d", len(after), len(db.WriteStageNames))
			}
			diff := make(map[string][]uint64)
			for i, st := range after {
				if st.Name != db.WriteStageNames[i] {
					t.Fatalf("stage %d is %q, want %q", i, st.Name, db.WriteStageNames[i])
				}
				if n := st.Count - before[i].Count; n != 2 {
					t.Errorf("%s stage: %d writes, want 2", st.Name, n)
				}
				d := make([]uint64, len(st.Counts)+1)
				for b := range st.Counts {
					d[b] = st.Counts[b] - before[i].Counts[b]
				}
				d[len(st.Counts)] = st.Over - before[i].Over
				diff[st.Name] = d
			}
			// atLeast counts a stage's writes that took at least min (by
			// bucket: those in buckets whose upper bound is at least min).
			atLeast := func(stage string, min time.Duration) uint64 {
				var n uint64
				for b, c := range diff[stage] {
					if b == len(db.WriteStageBuckets) || db.WriteStageBuckets[b] >= min.Seconds() {
						n += c
					}
				}
				return n
			}
			if n := atLeast("run", slow); n < 1 {
				t.Errorf("run stage: no write took %v or more, though one held the batch that long: %v", slow, diff["run"])
			}
			// The queued write ran in the next batch, so the wait is its queue
			// stage; the bucket holding it starts below wait.
			lower := db.WriteStageBuckets[:]
			k, _ := slices.BinarySearch(lower, wait.Seconds())
			if k > 0 {
				if n := atLeast("queue", time.Duration(lower[k-1]*float64(time.Second))+1); n < 1 {
					t.Errorf("queue stage: no write waited about %v for the slow write: %v", wait, diff["queue"])
				}
			}
		})
	}
}
