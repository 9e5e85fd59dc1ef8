package web

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Request body limits. No staff form comes near 1 MB (the longest, a record's
// subjects, is limited to 100 headings of 500 characters); only the MARC upload
// is larger, and it has its own limit (maxMARCUpload) and longer deadlines.
const (
	maxFormBody = 1 << 20

	// uploadPath is the MARC upload, exempt from maxFormBody (as is the patron
	// load's, patronUploadPath, with its own limit maxPatronUpload).
	uploadPath = "/admin/import"
	// uploadReadTimeout and uploadWriteTimeout replace the server's 60 s read and
	// write timeouts for an administrator's MARC upload: 100 MB takes minutes on a
	// slow link, and importing it takes longer than any page.
	uploadReadTimeout  = 15 * time.Minute
	uploadWriteTimeout = 30 * time.Minute
)

// limitBody bounds what a request may send. A form larger than maxFormBody is
// answered 413 with a page that says why, before any handler runs; so is a form
// that cannot be parsed (400), since the handlers read fields with PostFormValue,
// which would hide either failure as empty fields.
//
// The form is parsed here, eagerly: Content-Length alone cannot be trusted (a
// chunked body has none), and only reading the body through http.MaxBytesReader
// finds out. The handlers then use the parsed form. The MARC upload is exempt: its
// handler applies its own 100 MB limit, and its connection gets longer deadlines,
// but only once the handler starts reading the upload, that is after requireAdmin
// let it through: nobody else can hold a connection open for longer than the
// server's timeouts.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && (r.URL.Path == uploadPath || r.URL.Path == patronUploadPath) {
			r.Body = &uploadBody{ReadCloser: r.Body, w: w}
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxFormBody {
			s.tooLarge(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			next.ServeHTTP(w, r)
			return
		}
		// ParseForm reads a urlencoded body; ParseMultipartForm a multipart one (and
		// reports a urlencoded body only as "not multipart"), so both are called.
		err := r.ParseForm()
		if err == nil {
			if err = r.ParseMultipartForm(maxFormBody); errors.Is(err, http.ErrNotMultipart) {
				err = nil
			}
		}
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			s.tooLarge(w, r)
			return
		case errors.Is(err, os.ErrDeadlineExceeded) || r.Context().Err() != nil:
			// The client sent too slowly (the server's read timeout) or went away:
			// there is no one to show a page to.
			w.Header().Set("Connection", "close")
			http.Error(w, "The request was not received in time.", http.StatusRequestTimeout)
			return
		case err != nil:
			s.limitError(w, r, http.StatusBadRequest, "Bad request",
				"The form could not be read: it was not sent the way a browser sends a form. Go back, reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooLarge answers a request whose body is over the limit, and closes the
// connection rather than read the rest.
func (s *Server) tooLarge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	s.limitError(w, r, http.StatusRequestEntityTooLarge, "Too much data",
		"The form sent more than 1 MB, far more than any form here needs, so it was not saved. "+
			"If you pasted a long text into a field, shorten it and try again. "+
			"To load MARC records, use Import MARC records under Administration.")
}

// limitError renders an error page without the session, which limitBody runs before.
func (s *Server) limitError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	p := &Page{Title: title, LibraryName: "Stacks"}
	ws, _ := workstationFrom(r)
	p.Sounds, p.ReceiptPaper, p.ScanGap = ws.Sounds, ws.ReceiptPaper, ws.ScanGap
	if prefs, err := s.preferences(r.Context()); err == nil {
		p.LibraryName = prefs.LibraryName
	}
	s.Render(w, r, status, ErrorPage(p, status, message))
}

// uploadBody is the body of a MARC upload: at its first read, that is once the
// administrator's handler accepts the upload, it extends the connection's read and
// write deadlines beyond the server's (where it can: not in CGI mode).
type uploadBody struct {
	io.ReadCloser
	w        http.ResponseWriter
	extended bool
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if !b.extended {
		b.extended = true
		rc := http.NewResponseController(b.w)
		now := time.Now()
		_ = rc.SetReadDeadline(now.Add(uploadReadTimeout))
		_ = rc.SetWriteDeadline(now.Add(uploadWriteTimeout))
	}
	return b.ReadCloser.Read(p)
}
