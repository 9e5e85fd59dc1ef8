package web_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func zebraSample(t *testing.T) []byte {
	t.Helper()
	zebra, err := os.ReadFile(filepath.Join("..", "catalog", "marc", "testdata", "zebra-sample.mrc"))
	if err != nil {
		t.Fatal(err)
	}
	return zebra
}

// stageBatch stages the zebra sample as an administrator and returns the
// batch's id.
func stageBatch(t *testing.T, e *testEnv, c *http.Client) string {
	t.Helper()
	r := e.postFile(t, c, "/admin/import", "file", "zebra-sample.mrc", zebraSample(t),
		map[string]string{"branch": "CEN", "item_type": "BOOK", "generate": "1", "stage": "1"})
	id, ok := strings.CutPrefix(r.Location, "/admin/import/batches/")
	if r.Status != http.StatusSeeOther || !ok {
		t.Fatalf("stage: %d to %q, want 303 to the batch\n%s", r.Status, r.Location, r.Body)
	}
	return id
}

// TestImportBatch: a staged upload changes nothing until committed; its
// review lists the matches by rule and the errors by position; the actions
// decide what the commit does; an undo takes the batch back out.
func TestImportBatch(t *testing.T) {
	e := newAdminEnv(t)
	form := map[string]string{"branch": "CEN", "item_type": "BOOK", "generate": "1"}
	if r := e.postFile(t, e.Admin, "/admin/import", "file", "zebra-sample.mrc", zebraSample(t), form); r.Status != http.StatusOK {
		t.Fatalf("import: %d", r.Status)
	}
	records := e.count(t, `SELECT count(*) FROM records`)
	id := stageBatch(t, e.testEnv, e.Admin)
	if n := e.count(t, `SELECT count(*) FROM records`); n != records {
		t.Fatalf("staging changed the catalogue: %d records, were %d", n, records)
	}
	base := "/admin/import/batches/" + id
	r := e.get(t, e.Admin, base)
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "is staged as batch "+id) || !strings.Contains(r.Body, "Errors (2)") ||
		!strings.Contains(r.Body, "New records (0)") {
		t.Fatalf("review: %d\n%s", r.Status, r.Body)
	}
	adminCheckLabels(t, base, r.Body)
	r = e.get(t, e.Admin, base+"?list=001")
	if !strings.Contains(r.Body, "control number (001)") || !strings.Contains(r.Body, `href="/records/`) {
		t.Errorf("the 001 list names no record matched:\n%s", r.Body)
	}
	r = e.get(t, e.Admin, base+"?list=errors")
	if !strings.Contains(r.Body, "empty record") {
		t.Errorf("the errors list does not say what is wrong:\n%s", r.Body)
	}
	if r := e.get(t, e.Admin, base+"?list=nonsense"); r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusBadRequest {
		t.Errorf("unknown list: %d", r.Status)
	}

	// Every match is added as new, whatever its rule.
	r = e.post(t, e.Admin, base+"/actions", url.Values{"action_001": {"new"}, "action_035": {"new"}, "action_isbn": {"new"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("actions: %d\n%s", r.Status, r.Body)
	}
	if r := e.post(t, e.Admin, base+"/actions", url.Values{"action_001": {"merge"}}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown action: %d", r.Status)
	}
	r = e.post(t, e.Admin, base+"/commit", nil)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("commit: %d\n%s", r.Status, r.Body)
	}
	if r := e.get(t, e.Admin, r.Location); !strings.Contains(r.Body, "is committed: 24 records created") {
		t.Errorf("no commit message:\n%s", r.Body)
	}
	if n := e.count(t, `SELECT count(*) FROM records`); n != records+24 {
		t.Errorf("%d records after the commit, want %d", n, records+24)
	}
	if r := e.post(t, e.Admin, base+"/commit", nil); r.Status != http.StatusConflict {
		t.Errorf("a second commit: %d, want 409", r.Status)
	}

	// A desk account cannot reach the batch.
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	if r := e.post(t, c, base+"/undo", nil); r.Status != http.StatusForbidden {
		t.Errorf("desk undo: %d, want 403", r.Status)
	}

	r = e.post(t, e.Admin, base+"/undo", nil)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("undo: %d\n%s", r.Status, r.Body)
	}
	if r := e.get(t, e.Admin, r.Location); !strings.Contains(r.Body, "is undone: 24 records deleted") {
		t.Errorf("no undo message:\n%s", r.Body)
	}
	if n := e.count(t, `SELECT count(*) FROM records`); n != records {
		t.Errorf("%d records after the undo, want %d", n, records)
	}
	if r := e.get(t, e.Admin, "/admin/import"); !strings.Contains(r.Body, `href="`+base+`"`) || !strings.Contains(r.Body, "undone") {
		t.Errorf("the import page does not list the batch:\n%s", r.Body)
	}
}
