package web_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// onlyReader hides a reader's type, so that the client cannot know the body's
// length and sends it chunked, without Content-Length.
type onlyReader struct{ io.Reader }

// multipartBody is a multipart form with the fields and, if name is not empty, one
// file.
func multipartBody(fields map[string]string, field, name string, content []byte) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if name != "" {
		fw, _ := mw.CreateFormFile(field, name)
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func TestLimitBody(t *testing.T) {
	e := newAdminEnv(t)
	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	big := strings.Repeat("x", 1<<20)
	zebra, err := os.ReadFile(filepath.Join("..", "catalog", "marc", "testdata", "zebra-sample.mrc"))
	if err != nil {
		t.Fatal(err)
	}
	// A MARC file of 2 MB: the sample, then padding after its last record.
	marcBig := append(append([]byte{}, zebra...), bytes.Repeat([]byte("\n"), 2<<20)...)
	mpType, mpBig := multipartBody(map[string]string{"title": big}, "", "", nil)
	upType, upBody := multipartBody(map[string]string{"branch": "CEN", "item_type": "BOOK"}, "file", "big.mrc", marcBig)

	for _, tc := range []struct {
		name        string
		client      *http.Client
		path        string
		contentType string
		body        []byte
		chunked     bool
		status      int    // 0: anything but 413, 400 and 5xx
		message     string // in the body
	}{
		{"OKSmallForm", desk, "/checkin", "application/x-www-form-urlencoded", []byte("barcode=NOSUCH"), false, 0, ""},
		{"OKJustUnderLimit", desk, "/checkin", "application/x-www-form-urlencoded",
			[]byte("barcode=NOSUCH&pad=" + big[:1<<20-100]), false, 0, ""},
		{"ErrTooLarge", desk, "/checkin", "application/x-www-form-urlencoded",
			[]byte("barcode=I00001&pad=" + big), false, http.StatusRequestEntityTooLarge, "more than 1 MB"},
		{"ErrTooLargeChunked", desk, "/checkin", "application/x-www-form-urlencoded",
			[]byte("barcode=I00001&pad=" + big), true, http.StatusRequestEntityTooLarge, "more than 1 MB"},
		{"ErrTooLargeMultipart", desk, "/records", mpType, mpBig, true, http.StatusRequestEntityTooLarge, "more than 1 MB"},
		{"ErrTooLargeAnonymous", e.client(t), "/login", "application/x-www-form-urlencoded",
			[]byte("username=desk&password=" + big), false, http.StatusRequestEntityTooLarge, "more than 1 MB"},
		{"ErrTooLargeAdminForm", e.Admin, "/admin/preferences", "application/x-www-form-urlencoded",
			[]byte("library_name=" + big), true, http.StatusRequestEntityTooLarge, "more than 1 MB"},
		{"ErrMalformedEncoding", desk, "/checkin", "application/x-www-form-urlencoded",
			[]byte("barcode=%zz"), false, http.StatusBadRequest, "The form could not be read"},
		{"ErrMultipartWithoutBoundary", desk, "/checkin", "multipart/form-data", []byte("barcode=I00001"), false,
			http.StatusBadRequest, "The form could not be read"},
		{"OKMARCUploadOverFormLimit", e.Admin, "/admin/import", upType, upBody, false, http.StatusOK, "Imported big.mrc"},
		{"OKMARCUploadChunked", e.Admin, "/admin/import", upType, upBody, true, http.StatusOK, "Imported big.mrc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = onlyReader{body}
			}
			req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+tc.path, body)
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("Origin", e.Srv.URL)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			r := do(t, tc.client, req)
			switch {
			case tc.status == 0 && (r.Status == 413 || r.Status == 400 || r.Status >= 500):
				t.Fatalf("status %d, want the form handled\n%s", r.Status, r.Body)
			case tc.status != 0 && r.Status != tc.status:
				t.Fatalf("status %d, want %d\n%.2000s", r.Status, tc.status, r.Body)
			}
			if !strings.Contains(r.Body, tc.message) {
				t.Errorf("the page does not say %q:\n%.2000s", tc.message, r.Body)
			}
			if tc.status == http.StatusRequestEntityTooLarge || tc.status == http.StatusBadRequest {
				if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
					t.Errorf("the error page lacks the security headers: CSP %q", csp)
				}
				if !strings.Contains(r.Header.Get("Content-Type"), "text/html") {
					t.Errorf("Content-Type %q, want a page", r.Header.Get("Content-Type"))
				}
			}
		})
	}
	// Nothing of the refused forms was stored.
	if n := e.count(t, `SELECT count(*) FROM loans`); n != 0 {
		t.Errorf("%d loans after refused forms", n)
	}
	if name := queryString(t, e.testEnv, `SELECT value FROM preferences WHERE name = 'library_name'`); len(name) > 100 {
		t.Errorf("the library name was changed by a refused form (%d bytes)", len(name))
	}
}

// TestUploadDeadlines: a server with a 1 s read timeout cuts off a form sent slowly,
// but lets an administrator's MARC upload take longer: its deadlines are extended
// once the upload handler starts reading.
func TestUploadDeadlines(t *testing.T) {
	e := newAdminEnv(t)
	srv := httptest.NewUnstartedServer(e.Web)
	srv.Config.ReadTimeout = time.Second
	srv.Config.WriteTimeout = time.Second
	srv.Start()
	t.Cleanup(srv.Close)

	// slowPost sends body in 5 parts over 2.5 s.
	slowPost := func(c *http.Client, path, contentType string, body []byte) (int, string, error) {
		pr, pw := io.Pipe()
		go func() {
			n := (len(body) + 4) / 5
			for i := 0; i < len(body); i += n {
				time.Sleep(500 * time.Millisecond) // the slow client under test
				if _, err := pw.Write(body[i:min(i+n, len(body))]); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, pr)
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Origin", srv.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	login := func(user string) *http.Client {
		c := e.client(t)
		form := url.Values{"username": {user}, "password": {user}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if r := do(t, c, req); r.Status != http.StatusSeeOther {
			t.Fatalf("login as %s: %d", user, r.Status)
		}
		return c
	}

	t.Run("OKSlowMARCUpload", func(t *testing.T) {
		zebra, _ := os.ReadFile(filepath.Join("..", "catalog", "marc", "testdata", "zebra-sample.mrc"))
		ct, body := multipartBody(map[string]string{"branch": "CEN", "item_type": "BOOK"}, "file", "slow.mrc", zebra)
		status, page, err := slowPost(login("admin"), "/admin/import", ct, body)
		if err != nil || status != http.StatusOK || !strings.Contains(page, "Imported slow.mrc") {
			t.Fatalf("slow upload: %d %v\n%.1000s", status, err, page)
		}
	})
	t.Run("ErrSlowForm", func(t *testing.T) {
		body := []byte("barcode=NOSUCH&pad=" + strings.Repeat("x", 2000))
		status, page, err := slowPost(login("desk"), "/checkin", "application/x-www-form-urlencoded", body)
		if err == nil && status < 400 {
			t.Fatalf("a form sent over 2.5 s to a server with a 1 s read timeout was answered %d:\n%.500s", status, page)
		}
	})
}
