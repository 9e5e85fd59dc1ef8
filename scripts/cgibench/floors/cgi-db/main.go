// Command cgi-db is the floor of a Go CGI program over the Stacks database: Go's
// start-up, modernc SQLite linked and initialised, the database STACKS_DB opened
// exactly as stacks cgi opens it (the project's db package: its pragmas, one read
// connection) and the schema checked (db.Migrate, one query when current), then
// "ok". No router, no templates, no handler: what any Go program must do on this
// database before it can answer. cgibench -floors times it beside stacks
// (docs/performance.md, "CGI and FastCGI").
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"

	"github.com/stacks-ils/stacks/db"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cgi-db:", err)
		os.Exit(1)
	}
}

func run() error {
	path := os.Getenv("STACKS_DB")
	if path == "" {
		return fmt.Errorf("STACKS_DB is not set: give the demo library's file")
	}
	// As cmd/stacks/cgi.go opens it.
	d, err := db.Open(path, db.Options{ReadConns: 1, Synchronous: "FULL", CommitEach: true, ExistingFile: true})
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Migrate(context.Background()); err != nil {
		return fmt.Errorf("check the schema of %s: %w", path, err)
	}
	return cgi.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	}))
}
