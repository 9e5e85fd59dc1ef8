package load

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stacks-ils/stacks/db"
)

// PGActivity is what PostgreSQL's own background work did while a run was
// measured: the checkpoints begun (after one begins, the first change of every
// page writes the whole page to the WAL) and the tables autovacuum and
// autoanalyze finished a pass over. A desk-paced run's tail moves with these, so a report
// says which of them fell in its window.
type PGActivity struct {
	Checkpoints int      `json:"checkpoints"`
	Vacuumed    []string `json:"autovacuumed,omitempty"`
	Analyzed    []string `json:"autoanalyzed,omitempty"`
}

// String is the report's line.
func (a PGActivity) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d checkpoint", a.Checkpoints)
	if a.Checkpoints != 1 {
		b.WriteString("s")
	}
	b.WriteString(" begun")
	list := func(what string, tables []string) {
		b.WriteString("; " + what + " ")
		if len(tables) == 0 {
			b.WriteString("of no table")
			return
		}
		b.WriteString(strings.Join(tables, ", "))
	}
	list("autovacuum", a.Vacuumed)
	list("autoanalyze", a.Analyzed)
	return b.String()
}

// pgCounters is one reading of the counters PGActivity compares.
type pgCounters struct {
	checkpoints int
	vacuums     map[string]int
	analyzes    map[string]int
}

// PGWatch reads PostgreSQL's counters at the start and the end of a measured
// window, on a connection of its own.
type PGWatch struct {
	d     *db.DB
	start pgCounters
	err   error
}

// WatchPostgres opens a watch on the database at url (a postgres:// URL).
func WatchPostgres(url string) (*PGWatch, error) {
	d, err := db.Open(url, db.Options{ReadConns: 1, WriteConns: 1, CommitEach: true})
	if err != nil {
		return nil, err
	}
	return &PGWatch{d: d}, nil
}

func (w *PGWatch) read() (pgCounters, error) {
	c := pgCounters{vacuums: map[string]int{}, analyzes: map[string]int{}}
	err := w.d.ReadOne(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT (SELECT CAST(checkpoints_timed + checkpoints_req AS BIGINT) FROM pg_stat_bgwriter),
			relname, CAST(autovacuum_count AS BIGINT), CAST(autoanalyze_count AS BIGINT) FROM pg_stat_user_tables`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var v, a int
			if err := rows.Scan(&c.checkpoints, &name, &v, &a); err != nil {
				return err
			}
			c.vacuums[name], c.analyzes[name] = v, a
		}
		return rows.Err()
	})
	return c, err
}

// Start takes the first reading (OnStart).
func (w *PGWatch) Start() { w.start, w.err = w.read() }

// Stop takes the second reading and returns what happened between them.
func (w *PGWatch) Stop() (*PGActivity, error) {
	defer w.d.Close()
	if w.err != nil {
		return nil, w.err
	}
	end, err := w.read()
	if err != nil {
		return nil, err
	}
	a := &PGActivity{Checkpoints: end.checkpoints - w.start.checkpoints}
	for _, name := range slices.Sorted(maps.Keys(end.vacuums)) {
		if end.vacuums[name] > w.start.vacuums[name] {
			a.Vacuumed = append(a.Vacuumed, name)
		}
		if end.analyzes[name] > w.start.analyzes[name] {
			a.Analyzed = append(a.Analyzed, name)
		}
	}
	return a, nil
}
