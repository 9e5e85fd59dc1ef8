package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// CommitStats reports how many write transactions ran and in how many durable
// commits (equal without group commit, which does not count them: both zero),
// on either engine. On PostgreSQL with CommitEach, writes counts the write
// transactions begun and commits those committed.
func (db *DB) CommitStats() (writes, commits int64) {
	if db.group != nil {
		return db.group.writes.Load(), db.group.commits.Load()
	}
	if db.engine == Postgres {
		return db.pgWrites.Load(), db.pgCommits.Load()
	}
	return 0, 0
}

// Group commit. On this kind of machine a durable SQLite commit (WAL,
// synchronous=FULL) costs an fsync, about 0.2 to 1 ms: one commit per transaction
// caps durable writes near a thousand a second whatever the CPU could do. The
// group writer owns the one write connection; a transaction that arrives while
// another batch commits waits in a queue, and the next batch takes everything
// waiting: it runs each transaction's function in a SAVEPOINT of one SQLite
// transaction, releases or rolls back each savepoint on its own result, commits
// once, and only then answers every caller. Durability is unchanged: nobody is
// told "done" before the fsync that makes their work permanent.

// maxBatch bounds how many transactions share one commit.
const maxBatch = 128

type writeResult struct {
	err   error
	panic any
}

type writeJob struct {
	ctx    context.Context
	fn     func(*Tx) error
	done   chan writeResult
	queued time.Time
}

type groupWriter struct {
	db    *DB
	queue chan *writeJob
	// flushq carries committed batches to the flusher (PostgreSQL only: nil
	// on SQLite, whose commit is durable when it returns).
	flushq chan committedBatch
	wg     sync.WaitGroup
	// mu guards closed and the queue's closing: enqueue sends under the read
	// lock, close closes under the write lock, so a write after (or racing)
	// Close gets errClosed, never a send on a closed channel.
	mu      sync.RWMutex
	closed  bool
	commits atomic.Int64
	writes  atomic.Int64
	// stages times where the committed writes waited (writestages.go).
	stages writeStages
}

func newGroupWriter(d *DB) *groupWriter {
	g := &groupWriter{db: d, queue: make(chan *writeJob, 4*maxBatch)}
	if d.engine == Postgres {
		g.flushq = make(chan committedBatch, maxFlushing)
		g.wg.Add(1)
		go g.flusher()
	}
	g.wg.Add(1)
	go g.loop()
	return g
}

// close stops the writer after the work already queued.
func (g *groupWriter) close() {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		close(g.queue)
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// write queues fn and waits for its durable commit (or its error). A caller whose
// context ends while it waits in the queue gets the context's error and its
// function never runs; once running, it runs to the end with the batch.
func (g *groupWriter) write(ctx context.Context, fn func(*Tx) error) (err error) {
	start := time.Now()
	stats := StatsFrom(ctx)
	defer func() { stats.addTime(time.Since(start)) }()
	job := &writeJob{ctx: ctx, fn: fn, done: make(chan writeResult, 1), queued: start}
	if err := g.enqueue(ctx, job); err != nil {
		return err
	}
	res := <-job.done
	if res.panic != nil {
		panic(res.panic)
	}
	if res.err != nil && g.db.stalePlan(res.err) {
		return errStalePlanWrite(res.err)
	}
	return res.err
}

// enqueue puts a job in the queue, unless ctx ends first or the database closed.
func (g *groupWriter) enqueue(ctx context.Context, job *writeJob) error {
	// The read lock is held while waiting for room in the queue: the writer's
	// loop keeps draining it, so a close waits at most for the queue to move.
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return errClosed
	}
	select {
	case g.queue <- job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *groupWriter) loop() {
	defer g.wg.Done()
	if g.flushq != nil {
		// The flusher answers what is committed, then ends.
		defer close(g.flushq)
	}
	for job := range g.queue {
		batch := []*writeJob{job}
	gather:
		for len(batch) < maxBatch {
			select {
			case j, ok := <-g.queue:
				if !ok {
					break gather
				}
				batch = append(batch, j)
			default:
				break gather
			}
		}
		g.run(batch)
	}
}

// run executes one batch in one transaction and answers every job.
//
// Each write runs in a savepoint of its own, so that a failing one undoes only
// its work; but while the transaction holds no work yet (the batch's first
// write, or every write before it failed) a write runs without one, and if it
// fails the transaction is rolled back and begun again. A batch of one, the
// usual batch when the desks are not busy, is therefore BEGIN, the write and
// COMMIT, two round trips to the database fewer than with a savepoint (on
// PostgreSQL, two fewer under the write lock); a failing first write costs the
// same three as a savepoint's would. A later write costs one round trip more
// than itself: its savepoint, which on PostgreSQL releases the one before in
// the same statement string (savepoint).
func (g *groupWriter) run(batch []*writeJob) {
	answers := make([]writeResult, len(batch))
	ran := make([]bool, len(batch))
	fail := func(err error) {
		for i, j := range batch {
			if answers[i].err == nil && answers[i].panic == nil {
				answers[i].err = err
			}
			j.done <- answers[i]
		}
	}
	began := time.Now()
	sqltx, err := g.begin()
	if err != nil {
		fail(err)
		return
	}
	locked := time.Now()
	clean := true // the transaction holds no write yet
	open := false // the savepoint of the write before is still open
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			answers[i].err = err
			continue
		}
		if !clean {
			if err := g.savepoint(sqltx, open); err != nil {
				sqltx.Rollback()
				fail(fmt.Errorf("savepoint: %w", err))
				return
			}
			open = true
		}
		tx := &Tx{tx: sqltx, ctx: context.WithoutCancel(j.ctx), now: g.db.Now().UTC().Truncate(time.Second), stats: StatsFrom(j.ctx), rebind: g.db.rebind}
		answers[i] = call(j.fn, tx)
		failed := answers[i].err != nil || answers[i].panic != nil
		switch {
		case clean && failed:
			// Nothing else is in the transaction: start it again.
			sqltx.Rollback()
			if sqltx, err = g.begin(); err != nil {
				fail(err)
				return
			}
		case clean:
			clean = false
		case failed:
			if _, err := sqltx.Exec("ROLLBACK TO w"); err != nil {
				sqltx.Rollback()
				fail(fmt.Errorf("undo a failed write: %w", err))
				return
			}
		}
		ran[i] = !failed
	}
	g.writes.Add(int64(len(batch)))
	if clean {
		// Every write failed or was cancelled: there is nothing to commit.
		sqltx.Rollback()
		for i, j := range batch {
			j.done <- answers[i]
		}
		return
	}
	g.commits.Add(1)
	c := committedBatch{batch: batch, answers: answers, ran: ran, stages: &g.stages, began: began, locked: locked}
	err = sqltx.Commit()
	c.committed = time.Now()
	if err != nil || g.flushq == nil {
		c.answer(err)
		return
	}
	// PostgreSQL: answered once the flusher has made the commit durable; the
	// next batch starts now.
	g.flushq <- c
}

// savepoint starts the savepoint of a batch's next write (always called w:
// the one before is released first, so they never nest, and COMMIT releases
// the last). On PostgreSQL, where each statement is a round trip made under
// the write lock, releasing the one before and starting the next go in one
// statement string (a statement without arguments goes by the simple query
// protocol, which takes several).
func (g *groupWriter) savepoint(sqltx *sql.Tx, open bool) error {
	switch {
	case !open:
		_, err := sqltx.Exec("SAVEPOINT w")
		return err
	case g.db.engine == Postgres:
		_, err := sqltx.Exec("RELEASE w; SAVEPOINT w")
		return err
	}
	if _, err := sqltx.Exec("RELEASE w"); err != nil {
		return err
	}
	_, err := sqltx.Exec("SAVEPOINT w")
	return err
}

// committedBatch is a batch whose transaction committed (on PostgreSQL, not
// yet durably), with its answers.
type committedBatch struct {
	batch   []*writeJob
	answers []writeResult
	ran     []bool
	// stages records, when the batch is answered, where its writes waited:
	// the batch began, had its lock and committed at these times.
	stages                   *writeStages
	began, locked, committed time.Time
}

// answer tells every job of the batch its result; err, the commit's (or the
// flush's) error, goes to the writes that had run.
func (c committedBatch) answer(err error) {
	if err != nil {
		err = fmt.Errorf("commit: %w", err)
		for i := range c.batch {
			if c.ran[i] {
				c.answers[i].err = err
			}
		}
	}
	answered := time.Now()
	for i, j := range c.batch {
		c.stages.observe(j.queued, c.began, c.locked, c.committed, answered)
		j.done <- c.answers[i]
	}
}

// maxFlushing bounds the batches committed and waiting for their flush; the
// writer waits for room (the flusher takes every waiting batch at once).
const maxFlushing = 64

// flusher answers committed batches once their commits are durable: it takes
// every batch committed so far, makes the WAL durable past the last of them
// with one flush (flushAfterCommit), and answers them all. While it waits for
// the flush the writer runs and commits the next batch, instead of waiting
// with the work that arrived meanwhile; batches committed during one flush
// share the next.
func (g *groupWriter) flusher() {
	defer g.wg.Done()
	for c := range g.flushq {
		pending := []committedBatch{c}
	more:
		for {
			select {
			case c, ok := <-g.flushq:
				if !ok {
					break more
				}
				pending = append(pending, c)
			default:
				break more
			}
		}
		// Every pending batch committed before this flush began, so the
		// flush's own commit comes after theirs in the WAL.
		err := g.flushAfterCommit()
		for _, c := range pending {
			c.answer(err)
		}
	}
}

// On PostgreSQL the write lock (a transaction-scoped advisory lock) is released
// when the transaction ends, and a durable commit ends only after its WAL flush:
// so every batch in the consortium would wait for the previous batch's fsync.
// Instead a batch commits asynchronously (synchronous_commit off for that
// transaction: the lock goes at once) and then, outside the lock and before
// anybody is answered, flushes (the flusher, while the writer goes on with the
// next batch): a transaction that writes to the WAL (a
// transactional logical message, which any role may emit and nothing here
// decodes) and commits with the session's synchronous_commit (on by default)
// waits until the WAL up to its commit, which holds the batch's commit, is on
// disk (and on a synchronous standby if one is configured). A transaction that
// only takes a transaction id would not do: PostgreSQL does not flush for a
// commit that wrote nothing else. Nobody is told "done" before
// their work is durable, as before; what changes is that another server's
// batch may read this batch's rows in the millisecond between its commit and
// the flush. If PostgreSQL crashed in that window both would be lost, and
// neither had been acknowledged: the other batch's own flush comes later in
// the same WAL.

// begin starts a batch's transaction; on PostgreSQL it takes the write lock
// first (batchLockStatement).
func (g *groupWriter) begin() (*sql.Tx, error) {
	sqltx, err := g.db.write.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	if g.db.engine == Postgres {
		if _, err := sqltx.Exec(batchLockStatement); err != nil {
			sqltx.Rollback()
			return nil, fmt.Errorf("wait for the write lock: %w", err)
		}
	}
	return sqltx, nil
}

// batchLockStatement takes the write lock and turns synchronous_commit off for
// the batch's transaction, in one round trip.
var batchLockStatement = fmt.Sprintf("SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(%d)", writeLockKey)

// flushAfterCommit waits until every batch committed before it began is
// durable (above).
func (g *groupWriter) flushAfterCommit() error {
	if _, err := g.db.write.Exec(`SELECT pg_logical_emit_message(true, 'stacks.flush', '')`); err != nil {
		return fmt.Errorf("flush the write-ahead log: %w", err)
	}
	return nil
}

// call runs fn, turning a panic into a result the caller re-raises.
func call(fn func(*Tx) error, tx *Tx) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panic: p}
		}
	}()
	return writeResult{err: fn(tx)}
}

// errClosed is what a write gets after Close.
var errClosed = errors.New("the database is closed")
