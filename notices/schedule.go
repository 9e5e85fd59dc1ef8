package notices

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// ParseRunAt checks a time of day "HH:MM".
func ParseRunAt(s string) (string, error) {
	h, m, err := library.ParseClosingTime(s)
	if err != nil {
		return "", stacks.FieldErrorf("run_at", stacks.EINVALID, "Enter the time the notices run as HH:MM, for example 07:00.")
	}
	return fmt.Sprintf("%02d:%02d", h, m), nil
}

// DailyDue reports whether the daily run should happen now: today's run has not
// finished and it is past at (local time), or the last finished run is older
// than yesterday (the server was down when it was due: catch up at once). The
// very first run (a new install, or the upgrade that brought notices: no run in
// the log) waits for its time of day like any other, so that an upgrade at
// night does not send notices at once. at "" reads the notices_run_at
// preference (default 07:00).
func DailyDue(ctx context.Context, d *db.DB, at string) (bool, error) {
	var due bool
	err := d.Read(ctx, func(tx *db.Tx) error {
		p, err := library.LoadPreferences(tx)
		if err != nil {
			return err
		}
		if at == "" {
			at = p.Raw[PrefRunAt]
		}
		if at, err = ParseRunAt(at); err != nil {
			at = DefaultRunAt
		}
		now := d.Now().In(p.Location)
		today := now.Format(db.DayFormat)
		yesterday := now.AddDate(0, 0, -1).Format(db.DayFormat)
		var last sql.NullString
		if err := tx.QueryRow(`SELECT max(library_day) FROM notice_runs WHERE finished_at IS NOT NULL`).Scan(&last); err != nil {
			return fmt.Errorf("read notice runs: %w", err)
		}
		switch {
		case last.String >= today:
			due = false
		case now.Format("15:04") >= at:
			due = true
		case !last.Valid:
			due = false
		default:
			due = last.String < yesterday
		}
		return nil
	})
	return due, err
}

// DailyJob is work done once a library day before the daily notices.
type DailyJob struct {
	// Name names the job in logs, such as "lost items".
	Name string
	// Run does the job and says what it did, in a line for the log.
	Run func(ctx context.Context, d *db.DB) (string, error)
}

// RunJobs runs each job in order, logging what each did; a failed job is logged
// and does not stop the others. It returns the first error, if any.
func RunJobs(ctx context.Context, d *db.DB, jobs []DailyJob, logger *slog.Logger) error {
	var first error
	for _, j := range jobs {
		start := time.Now()
		did, err := j.Run(ctx, d)
		if err != nil {
			err = fmt.Errorf("daily job %s: %w", j.Name, err)
			if first == nil {
				first = err
			}
			if logger != nil {
				logger.Warn("daily job failed", "job", j.Name, "err", err)
			}
			continue
		}
		if logger != nil {
			logger.Info("daily job", "job", j.Name, "did", did, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	return first
}

// Scheduler does the notices' work in a running server: the daily run once a
// day at At (and at once after downtime that missed one), and, every Interval,
// composing new hold notices and sending what is due. It holds no state of its
// own: the run log and the queue are in the database, so a restart loses
// nothing and stacks notices run (cron), or other servers on the same
// database, can share the work (one at a time: see Tick).
type Scheduler struct {
	DB     *db.DB
	Sender Sender
	// Jobs are the other daily jobs (long overdues to lost, the privacy purge),
	// run in order before the daily notices when those are due, so that a notice
	// tells what they did. Each must be idempotent: a run repeated after a crash
	// or by cron (stacks daily) does nothing twice. A failed job is logged and the
	// others and the notices still run.
	Jobs []DailyJob
	// At is the local time of the daily run, "HH:MM"; "" reads the preference.
	At       string
	Interval time.Duration
	Logger   *slog.Logger
}

// LockName names the notices' work for db.Exclusive: the daily run (jobs and
// notices), composing hold notices and sending, which every server's scheduler
// and stacks notices run (cron) start on their own; one at a time does them.
const LockName = "notices"

// Tick does one pass: the daily run if due, hold notices, then delivery. When
// several servers share the database, the pass happens on one of them at a
// time (db.Exclusive); a server that finds another's pass running skips its
// own, so the daily run happens once, on whichever server gets there first,
// and the others find it done at their next pass.
func (s *Scheduler) Tick(ctx context.Context) error {
	_, err := s.DB.Exclusive(ctx, LockName, s.tick)
	return err
}

func (s *Scheduler) tick(ctx context.Context) error {
	due, err := DailyDue(ctx, s.DB, s.At)
	if err != nil {
		return err
	}
	if due {
		RunJobs(ctx, s.DB, s.Jobs, s.Logger)
		start := time.Now()
		res, err := RunDaily(ctx, s.DB, RunOptions{})
		if err != nil {
			return fmt.Errorf("daily notices: %w", err)
		}
		if !res.Skipped && s.Logger != nil {
			s.Logger.Info("daily notices run", "day", res.Day, "items", res.Items, "messages", res.Messages, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	if _, err := ComposeHolds(ctx, s.DB); err != nil {
		return fmt.Errorf("hold notices: %w", err)
	}
	for range 50 {
		r, err := Deliver(ctx, s.DB, s.Sender, 100)
		if err != nil {
			return fmt.Errorf("send notices: %w", err)
		}
		if s.Logger != nil && r.Total() > 0 {
			s.Logger.Info("notices sent", "sent", r.Sent, "retry", r.Retry, "failed", r.Failed, "cancelled", r.Cancelled)
		}
		if r.Total() < 100 {
			break
		}
	}
	return nil
}

// Run ticks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil && s.Logger != nil {
			s.Logger.Warn("notices", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
