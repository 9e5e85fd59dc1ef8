package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/waittest"
	"github.com/stacks-ils/stacks/web"
)

// TestAdminPatronLoadPINsInBackground: a patron file with more PINs than one
// request hashes (Config.LoadPINsPerRequest, 5 here) is checked in its request,
// then hashed on the bounded pool of package passwords and written in the
// background: the post answers 303 to a progress page, which says how far the
// load got and asks the browser to reload it, and which at the end shows the
// result. A second such load while one runs is refused with a link to it; a
// file within the bound is still imported in its own request.
func TestAdminPatronLoadPINsInBackground(t *testing.T) {
	e := newAdminEnv(t)
	bg, stop := context.WithCancel(context.Background())
	w := web.New(web.Config{DB: e.DB, CachePreferences: true, LoadPINsPerRequest: 5, Background: bg})
	e.Srv = httptest.NewServer(w) // the admin's session cookie is for 127.0.0.1, this server too
	t.Cleanup(func() { stop(); w.Wait(); e.Srv.Close() })

	file := func(prefix string, n int) []byte {
		var b strings.Builder
		b.WriteString("card,surname,category,home_branch,expires_on,pin\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%s%04d,Pupil,ADULT,CEN,2027-08-31,%04d\n", prefix, i, 1000+i)
		}
		return []byte(b.String())
	}
	form := map[string]string{"match": "card", "action": "import"}
	const path = "/admin/patrons/import"

	t.Run("WithinTheBound", func(t *testing.T) {
		r := e.postFile(t, e.Admin, path, "file", "five.csv", file("F", 5), form)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "Imported five.csv") {
			t.Fatalf("5 PINs: %d to %q, want 200 with the result in the same request\n%s", r.Status, r.Location, r.Body)
		}
		if n := e.count(t, `SELECT count(*) FROM patrons WHERE card LIKE 'F%' AND pin_hash <> ''`); n != 5 {
			t.Errorf("%d patrons with PINs, want 5", n)
		}
	})

	t.Run("OverTheBound", func(t *testing.T) {
		// A desk's uncommitted patron with the file's first card holds the
		// load's write (the single writer on SQLite, the card's unique index on
		// PostgreSQL), so that the progress page is seen before the end.
		held, release := make(chan struct{}), make(chan struct{})
		desk := make(chan error, 1)
		go func() {
			desk <- e.DB.Write(context.Background(), func(tx *db.Tx) error {
				if _, err := tx.Exec(`INSERT INTO patrons (card, surname, category_id, home_branch_id, expires_on, created_at)
					VALUES ('B0001', 'Held', ?, ?, '2027-08-31', '2026-11-30T10:00:00Z')`, e.IDs["ADULT"], e.IDs["CEN"]); err != nil {
					return err
				}
				close(held)
				<-release
				return errors.New("rolled back")
			})
		}()
		select {
		case <-held:
		case err := <-desk:
			t.Fatalf("hold the write: %v", err)
		}
		released := false
		releaseOnce := func() {
			if !released {
				released = true
				close(release)
				<-desk
			}
		}
		defer releaseOnce()

		hashesBefore := passwords.Hashes()
		// The post must answer while the write is held: a load run to its end
		// in its request would wait for the write, and time out here.
		bounded := *e.Admin
		bounded.Timeout = 20 * time.Second
		r := e.postFile(t, &bounded, path, "file", "pupils.csv", file("B", 40), form)
		if r.Status != http.StatusSeeOther || !regexp.MustCompile(`^/admin/patrons/import/[0-9a-f]{32}$`).MatchString(r.Location) {
			t.Fatalf("40 PINs: %d to %q, want 303 to the import's progress page (not the whole load in one request)\n%s", r.Status, r.Location, r.Body)
		}
		job := r.Location

		// The progress page, until the PINs are hashed and the load waits to write.
		var page response
		waittest.For(t, "the progress page to say the PINs are protected", func() bool {
			page = e.get(t, e.Admin, job)
			return strings.Contains(page.Body, "All 40 PINs are protected; writing the patrons.")
		})
		if page.Status != http.StatusOK || page.Header.Get("Refresh") == "" || !strings.Contains(page.Body, `role="status"`) ||
			!strings.Contains(page.Body, `<progress max="40" value="40"`) || !strings.Contains(page.Body, "Importing pupils.csv") {
			t.Errorf("progress page: %d, Refresh %q\n%s", page.Status, page.Header.Get("Refresh"), page.Body)
		}
		adminCheckLabels(t, job, page.Body)
		if n := passwords.Hashes() - hashesBefore; n < 40 {
			t.Errorf("%d hashes on the bounded pool, want the file's 40 PINs there", n)
		}
		if n := e.count(t, `SELECT count(*) FROM patrons WHERE card LIKE 'B%'`); n != 0 {
			t.Errorf("%d patrons written before the load's write, want none", n)
		}

		// A second load with many PINs waits for the first.
		r = e.postFile(t, e.Admin, path, "file", "more.csv", file("M", 10), form)
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "Another patron import (pupils.csv)") || !strings.Contains(r.Body, `href="`+job+`"`) {
			t.Errorf("a second load while one runs: %d, want 409 with a link to the running one\n%s", r.Status, r.Body)
		}

		releaseOnce()
		waittest.For(t, "the progress page to show the result", func() bool {
			page = e.get(t, e.Admin, job)
			return strings.Contains(page.Body, "Imported pupils.csv")
		})
		if page.Header.Get("Refresh") != "" || !strings.Contains(page.Body, "<dt>Created</dt><dd>40</dd>") || !strings.Contains(page.Body, "PINs set: 40.") {
			t.Errorf("result page: Refresh %q\n%s", page.Header.Get("Refresh"), page.Body)
		}
		adminCheckLabels(t, job, page.Body)

		// In the database: every patron, with a hash of their own PIN, and the
		// load audited under the administrator.
		var hashes []string
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			rows, err := tx.Query(`SELECT pin_hash FROM patrons WHERE card LIKE 'B%' ORDER BY card`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var h string
				if err := rows.Scan(&h); err != nil {
					return err
				}
				hashes = append(hashes, h)
			}
			return rows.Err()
		}); err != nil {
			t.Fatal(err)
		}
		if len(hashes) != 40 {
			t.Fatalf("%d patrons, want 40", len(hashes))
		}
		for i, h := range hashes {
			if bcrypt.CompareHashAndPassword([]byte(h), []byte(fmt.Sprintf("%04d", 1001+i))) != nil {
				t.Errorf("B%04d: the stored hash is not of the file's PIN", i+1)
			}
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'patron.load' AND actor = 'admin' AND detail LIKE '%40 created%'`); n != 1 {
			t.Errorf("%d audit entries for the load, want 1", n)
		}
	})

	t.Run("UnknownLoad", func(t *testing.T) {
		if r := e.get(t, e.Admin, path+"/0123456789abcdef0123456789abcdef"); r.Status != http.StatusNotFound {
			t.Errorf("an unknown load's page: %d, want 404", r.Status)
		}
	})
}

// backgroundPatronLoad runs a patron load with more PINs than one request
// hashes, as admin, waits for its end, and returns its id.
func backgroundPatronLoad(t *testing.T, e *testEnv) string {
	t.Helper()
	c := e.client(t)
	if r := e.login(t, c, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	var b strings.Builder
	b.WriteString("card,surname,category,home_branch,expires_on,pin\n")
	for i := 1; i <= web.DefaultLoadPINsPerRequest+1; i++ {
		fmt.Fprintf(&b, "R%04d,Route,ADULT,CEN,2027-08-31,%04d\n", i, 1000+i)
	}
	r := e.postFile(t, c, "/admin/patrons/import", "file", "routes.csv", []byte(b.String()), map[string]string{"match": "card", "action": "import"})
	id, ok := strings.CutPrefix(r.Location, "/admin/patrons/import/")
	if r.Status != http.StatusSeeOther || !ok {
		t.Fatalf("a load of %d PINs: %d to %q, want 303 to its progress page\n%s", web.DefaultLoadPINsPerRequest+1, r.Status, r.Location, r.Body)
	}
	waittest.For(t, "the background patron load to end", func() bool {
		return strings.Contains(e.get(t, c, r.Location).Body, "Imported routes.csv")
	})
	return id
}
