package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.DropTemplates(); err != nil {
		println(err.Error())
		code = 1
	}
	os.Exit(code)
}

// TestTemplateCopies: a named template is built once, with what build wrote, and
// each copy of it is a database of its own.
func TestTemplateCopies(t *testing.T) {
	if !pgtest.Selected(db.Postgres) {
		t.Skip("PostgreSQL is not selected for this run")
	}
	ctx := context.Background()
	builds := 0
	build := func(d *db.DB) error {
		builds++
		return d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('MAIN', 'Main')`)
			return err
		})
	}
	var urls []string
	for range 2 {
		tmpl, err := pgtest.Template("one branch", build)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, pgtest.CopyURL(t, tmpl))
	}
	if builds != 1 || urls[0] == urls[1] {
		t.Fatalf("built %d times (want 1); copies %v (want two databases)", builds, urls)
	}
	a, err := db.Open(urls[0], db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('EAST', 'East')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, err := db.Open(urls[1], db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var n int
	if err := b.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM branches`).Scan(&n)
	}); err != nil || n != 1 {
		t.Fatalf("the second copy has %d branches (err %v), want the template's 1", n, err)
	}
}
