package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestPatronsImport: stacks patrons import checks the file, refuses one with a
// bad row (exit 1, the row named), imports the good rows with --skip-bad, and
// writes nothing in a dry run.
func TestPatronsImport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lib.db")
	var out bytes.Buffer
	if err := run(ctx, []string{"demo", "--db", path, "--titles", "10", "--patrons", "10"}, &out, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	file := filepath.Join(dir, "students.csv")
	csv := "\uFEFFcardnumber,surname,firstname,categorycode,branchcode,dateexpiry,student_id,house\n" +
		"S0001,Pupil,Ann,CHILD,EAS,2027-08-31,ST-1,Red\n" +
		"S0002,Pupil,Bob,PIRATE,EAS,31/08/2027,ST-2,Blue\n" +
		"P0001,,,STAFF,,,,\n"
	if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		d, err := db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var n int
		d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM patrons WHERE card LIKE 'S%' OR category_id = (SELECT id FROM patron_categories WHERE code = 'STAFF')`).Scan(&n)
		})
		return n
	}
	before := count()

	t.Run("ErrBadRow", func(t *testing.T) {
		out.Reset()
		err := run(ctx, []string{"patrons", "import", "--db", path, file}, &out, &out)
		if exitCode(err) != 1 {
			t.Fatalf("exit %d, want 1\n%s", exitCode(err), out.String())
		}
		for _, want := range []string{"columns not recognised, not read: house", "line 3 S0002 / ST-2:", `there is no patron category "PIRATE"`,
			`"31/08/2027" is not a date`, "1 bad (nothing imported)", "nothing was imported"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		if count() != before {
			t.Error("a file with a bad row changed patrons")
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		out.Reset()
		err := run(ctx, []string{"patrons", "import", "--db", path, "--dry-run", "--skip-bad", file}, &out, &out)
		if err != nil {
			t.Fatalf("dry run: %v\n%s", err, out.String())
		}
		for _, want := range []string{"line 2 S0001 / ST-1: create", "line 4 P0001: update category \"ADULT\" -> \"STAFF\"", "(dry run, nothing written)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		if count() != before {
			t.Error("the dry run changed patrons")
		}
	})
	t.Run("SkipBad", func(t *testing.T) {
		out.Reset()
		err := run(ctx, []string{"patrons", "import", "--db", path, "--skip-bad", file}, &out, &out)
		if err != nil || !strings.Contains(out.String(), "3 rows, 1 created, 1 updated, 0 unchanged, 1 bad (imported)") {
			t.Fatalf("skip bad: %v\n%s", err, out.String())
		}
		if got := count(); got != before+2 {
			t.Errorf("%d matching patrons, want %d", got, before+2)
		}
	})
	t.Run("OverwritePINs", func(t *testing.T) {
		pins := filepath.Join(dir, "pins.csv")
		if err := os.WriteFile(pins, []byte("card;pin\nP0001;8642\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := run(ctx, []string{"patrons", "import", "--db", path, pins}, &out, &out); err != nil ||
			!strings.Contains(out.String(), "separated by semicolons") || !strings.Contains(out.String(), "1 rows, 0 created, 0 updated, 1 unchanged, 0 bad (imported)") || strings.Contains(out.String(), "PINs set") {
			t.Fatalf("without --overwrite-pins: %v\n%s", err, out.String())
		}
		out.Reset()
		if err := run(ctx, []string{"patrons", "import", "--db", path, "--overwrite-pins", pins}, &out, &out); err != nil ||
			!strings.Contains(out.String(), "1 rows, 0 created, 1 updated, 0 unchanged, 0 bad (imported)") || !strings.Contains(out.String(), "PINs set: 1") {
			t.Fatalf("with --overwrite-pins: %v\n%s", err, out.String())
		}
	})
	t.Run("Help", func(t *testing.T) {
		out.Reset()
		run(ctx, []string{"patrons", "import", "--help"}, &out, &out)
		for _, want := range []string{"cardnumber", "categorycode", "student_id", "YYYY-MM-DD", "--skip-bad", "--overwrite-pins", "20,000"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("help lacks %q", want)
			}
		}
		if err := run(ctx, []string{"patrons", "import", "--db", path}, &out, &out); exitCode(err) != 2 {
			t.Errorf("no file: exit %d, want 2", exitCode(err))
		}
	})
}
