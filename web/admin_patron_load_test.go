package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/patrons"
)

// TestAdminPatronLoad: the upload page checks a file (dry run) without writing,
// refuses a file with a bad row and names it, imports the good rows when asked,
// and shows markup in a cell as text.
func TestAdminPatronLoad(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin")
	if !strings.Contains(r.Body, `<a href="/admin/patrons/import">Import patrons</a>`) {
		t.Error("the administration menu does not link the patron load")
	}
	r = e.get(t, e.Admin, "/admin/patrons/import")
	if r.Status != 200 || !strings.Contains(r.Body, `<label for="file">CSV file of patrons</label>`) {
		t.Fatalf("page: %d", r.Status)
	}
	adminCheckLabels(t, "/admin/patrons/import", r.Body)

	csv := []byte("\uFEFFcardnumber,surname,firstname,categorycode,branchcode,dateexpiry,note\r\n" +
		"S0001,Pupil,Ann,CHILD,EAS,2027-08-31,x\r\n" +
		"S0002,\"<script>alert(1)</script>\",Bob,PIRATE,EAS,2027-08-31,y\r\n" +
		"S0003,Pupil,Cy,,,2027-08-31,z\r\n")
	form := map[string]string{"match": "card", "default_category": "ADULT", "default_branch": "CEN", "action": "dry-run"}
	students := `SELECT count(*) FROM patrons WHERE card LIKE 'S%'`

	t.Run("DryRun", func(t *testing.T) {
		form["skip_bad"] = "1"
		defer delete(form, "skip_bad")
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "students.csv", csv, form)
		if r.Status != 200 {
			t.Fatalf("dry run: %d\n%s", r.Status, r.Body)
		}
		for _, want := range []string{"Checked students.csv (dry run: nothing was written)", "<dt>To create</dt><dd>2</dd>",
			"<dt>Rows with problems</dt><dd>1</dd>", "Columns not recognised, so not read: note.",
			`there is no patron category &#34;PIRATE&#34;`, "What the import would do", "<td>S0003</td><td>create</td>"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(r.Body, "<script>alert(1)") {
			t.Error("a cell's markup is on the page unescaped")
		}
		if n := e.count(t, students); n != 0 {
			t.Errorf("the dry run created %d patrons", n)
		}
	})
	t.Run("ErrBadRows", func(t *testing.T) {
		form["action"] = "import"
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "students.csv", csv, form)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Not imported: students.csv") ||
			!strings.Contains(r.Body, "nothing was imported") || !strings.Contains(r.Body, `<td class="num">3</td><td>S0002</td>`) {
			t.Fatalf("bad rows: %d\n%s", r.Status, r.Body)
		}
		if n := e.count(t, students); n != 0 {
			t.Errorf("a file with a bad row created %d patrons", n)
		}
	})
	t.Run("SkipBad", func(t *testing.T) {
		form["action"], form["skip_bad"] = "import", "1"
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "students.csv", csv, form)
		if r.Status != 200 || !strings.Contains(r.Body, "Imported students.csv") || !strings.Contains(r.Body, "<dt>Created</dt><dd>2</dd>") {
			t.Fatalf("skip bad: %d\n%s", r.Status, r.Body)
		}
		if n := e.count(t, students); n != 2 {
			t.Errorf("%d patrons created, want 2", n)
		}
		if n := e.count(t, `SELECT count(*) FROM patrons p JOIN patron_categories c ON c.id = p.category_id
			JOIN branches b ON b.id = p.home_branch_id WHERE p.card = 'S0003' AND c.code = 'ADULT' AND b.code = 'CEN'`); n != 1 {
			t.Error("S0003 did not take the default category and branch")
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'patron.load' AND detail LIKE '%2 created%'`); n != 1 {
			t.Error("no audit entry for the load")
		}
	})
	t.Run("ErrNoFile", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "", nil, form)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Choose a CSV file of patrons") {
			t.Fatalf("no file: %d", r.Status)
		}
	})
	t.Run("ErrNotCSV", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "x.csv", []byte("card,surname\nA1,\"open\n"), form)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "is not valid CSV") {
			t.Fatalf("not CSV: %d\n%s", r.Status, r.Body)
		}
	})
	t.Run("DryRunOldToNew", func(t *testing.T) {
		f := []byte("card;dateexpiry\nS0001;2028-08-31\n")
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "semi.csv", f, map[string]string{"match": "card", "action": "dry-run"})
		if r.Status != 200 || !strings.Contains(r.Body, "expires on &#34;2027-08-31&#34; -&gt; &#34;2028-08-31&#34;") ||
			!strings.Contains(r.Body, "The file is separated by semicolons; it was read that way.") {
			t.Fatalf("dry run: %d\n%s", r.Status, r.Body)
		}
	})
	t.Run("OverwritePINs", func(t *testing.T) {
		pin := `SELECT pin_generation FROM patrons WHERE card = 'S0001'`
		before := e.count(t, pin)
		f := []byte("card,pin\nS0001,8642\n")
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "pins.csv", f, map[string]string{"match": "card", "action": "import"})
		if r.Status != 200 || e.count(t, pin) != before {
			t.Fatalf("without the box: %d, PIN generation %d -> %d", r.Status, before, e.count(t, pin))
		}
		r = e.postFile(t, e.Admin, "/admin/patrons/import", "file", "pins.csv", f, map[string]string{"match": "card", "action": "import", "overwrite_pins": "1"})
		if r.Status != 200 || e.count(t, pin) != before+1 {
			t.Fatalf("with the box: %d, PIN generation %d -> %d", r.Status, before, e.count(t, pin))
		}
	})
	t.Run("ErrTooManyRows", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("card,surname,category,branch\n")
		for i := range patrons.WebLoadRows + 1 {
			fmt.Fprintf(&b, "W%06d,Many,ADULT,CEN\n", i)
		}
		r := e.postFile(t, e.Admin, "/admin/patrons/import", "file", "big.csv", []byte(b.String()), map[string]string{"match": "card", "action": "dry-run"})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "more than 20000 rows") {
			t.Fatalf("too many rows: %d\n%s", r.Status, r.Body)
		}
	})
}
