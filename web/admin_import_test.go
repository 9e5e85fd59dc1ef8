package web_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// postFile sends a same-origin multipart form with one file, as a browser does.
func (e *testEnv) postFile(t *testing.T, c *http.Client, path, field, name string, content []byte, values map[string]string) response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range values {
		mw.WriteField(k, v)
	}
	if name != "" {
		fw, _ := mw.CreateFormFile(field, name)
		fw.Write(content)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", e.Srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return do(t, c, req)
}

func TestAdminImport(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin/import")
	if r.Status != 200 || !strings.Contains(r.Body, `<label for="file">MARC file</label>`) {
		t.Fatalf("import page: %d", r.Status)
	}
	adminCheckLabels(t, "/admin/import", r.Body)

	zebra, err := os.ReadFile(filepath.Join("..", "catalog", "marc", "testdata", "zebra-sample.mrc"))
	if err != nil {
		t.Fatal(err)
	}
	form := map[string]string{"branch": "CEN", "item_type": "BOOK", "generate": "1"}
	r = e.postFile(t, e.Admin, "/admin/import", "file", "zebra-sample.mrc", zebra, form)
	if r.Status != 200 {
		t.Fatalf("import: %d\n%s", r.Status, r.Body)
	}
	for _, want := range []string{"Imported zebra-sample.mrc", "<dt>Records read</dt><dd>26</dd>", "<dt>Created</dt><dd>24</dd>", "<dt>Rejected</dt><dd>2</dd>", "empty record"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM records`); n != 24 {
		t.Errorf("%d records in the catalogue, want 24", n)
	}

	t.Run("RecordPageShowsMARC", func(t *testing.T) {
		var id string
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT CAST(min(id) AS TEXT) FROM records`).Scan(&id)
		})
		r := e.get(t, e.Admin, "/records/"+id)
		if !strings.Contains(r.Body, "<summary>MARC record</summary>") || !strings.Contains(r.Body, "\n245 ") || !strings.Contains(r.Body, " $a ") {
			t.Fatalf("no MARC view on the record page:\n%s", r.Body)
		}
	})
	t.Run("ErrNoFile", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/import", "file", "", nil, form)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Choose a MARC file") {
			t.Fatalf("no file: %d", r.Status)
		}
	})
	t.Run("ErrNotMARC", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/import", "file", "notes.txt", []byte("hello, this is not MARC"), form)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "not MARC 21") {
			t.Fatalf("not MARC: %d\n%s", r.Status, r.Body)
		}
	})
	t.Run("ErrUnknownBranch", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/import", "file", "z.mrc", zebra, map[string]string{"branch": "NOPE", "item_type": "BOOK"})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "no branch with code") {
			t.Fatalf("unknown branch: %d", r.Status)
		}
	})
	t.Run("ForbiddenToDesk", func(t *testing.T) {
		c := e.client(t)
		e.login(t, c, "desk", "desk")
		if r := e.postFile(t, c, "/admin/import", "file", "z.mrc", zebra, form); r.Status != http.StatusForbidden {
			t.Fatalf("desk import: %d, want 403", r.Status)
		}
	})
}
