package db

import (
	"slices"
	"sync/atomic"
	"time"
)

// Where a write waits. A write that goes through the group writer passes four
// stages, each timed per write:
//
//   - queue: from the caller's request to the start of the batch that runs it
//     (waiting for the batch before it to commit);
//   - lock: the batch's BEGIN (on SQLite, BEGIN IMMEDIATE: other processes'
//     writes) and, on PostgreSQL, the write lock that orders the writes of every
//     server (another server's batch holds it);
//   - run: the batch's writes, its own and those before and after it in the
//     batch, to the end of COMMIT;
//   - flush: on PostgreSQL, from COMMIT to the flush that makes it durable
//     (the flusher, shared with the batches committed meanwhile); zero on
//     SQLite, whose COMMIT is durable when it returns.
//
// They add up to the write's time in the database. The metrics expose them
// (stacks_db_write_stage_seconds), so a slow desk shows whether its writes
// wait for this server's queue, for another server, for their own SQL or for
// the disk.

// WriteStageBuckets are the upper bounds, in seconds, of the stage histograms.
var WriteStageBuckets = [...]float64{.0001, .0002, .0005, .001, .002, .003, .005, .0075, .01, .015, .02, .03, .05, .075, .1, .2, .5, 1}

// WriteStageNames name the stages, in order.
var WriteStageNames = [...]string{"queue", "lock", "run", "flush"}

// WriteStage is one stage's histogram: Counts[i] writes took at most
// WriteStageBuckets[i] (and more than the bound before it); Over took longer
// than the last bound.
type WriteStage struct {
	Name    string
	Counts  []uint64
	Over    uint64
	Count   uint64
	Seconds float64
}

type stageHistogram struct {
	counts [len(WriteStageBuckets) + 1]atomic.Uint64
	nanos  atomic.Int64
}

func (h *stageHistogram) observe(d time.Duration) {
	i, _ := slices.BinarySearch(WriteStageBuckets[:], d.Seconds())
	h.counts[i].Add(1)
	h.nanos.Add(int64(d))
}

// writeStages times the group writer's writes, stage by stage.
type writeStages [len(WriteStageNames)]stageHistogram

// observe records one write's stages: asked for at queued, in a batch that
// began, had its lock, committed and was answered at these times.
func (s *writeStages) observe(queued, began, locked, committed, answered time.Time) {
	s[0].observe(began.Sub(queued))
	s[1].observe(locked.Sub(began))
	s[2].observe(committed.Sub(locked))
	s[3].observe(answered.Sub(committed))
}

// WriteStages reports where the writes through this database's group writer
// have waited since it opened (nil without group commit).
func (db *DB) WriteStages() []WriteStage {
	if db.group == nil {
		return nil
	}
	out := make([]WriteStage, len(WriteStageNames))
	for i := range db.group.stages {
		h := &db.group.stages[i]
		st := WriteStage{Name: WriteStageNames[i], Counts: make([]uint64, len(WriteStageBuckets))}
		for b := range WriteStageBuckets {
			st.Counts[b] = h.counts[b].Load()
			st.Count += st.Counts[b]
		}
		st.Over = h.counts[len(WriteStageBuckets)].Load()
		st.Count += st.Over
		st.Seconds = time.Duration(h.nanos.Load()).Seconds()
		out[i] = st
	}
	return out
}
