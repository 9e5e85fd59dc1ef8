package kit

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// logTo returns a logger writing into a buffer, to check what was logged.
func logTo() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

// TestStatus: each stacks code has its status; only ENOTFOUND and
// sql.ErrNoRows (wrapped or not) are 404; any other error is 500.
func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{stacks.Errorf(stacks.EINVALID, "x"), http.StatusUnprocessableEntity},
		{stacks.Errorf(stacks.ENOTFOUND, "x"), http.StatusNotFound},
		{stacks.Errorf(stacks.ECONFLICT, "x"), http.StatusConflict},
		{stacks.Errorf(stacks.EUNAUTHORIZED, "x"), http.StatusUnauthorized},
		{stacks.Errorf(stacks.EFORBIDDEN, "x"), http.StatusForbidden},
		{stacks.Errorf(stacks.ETOOMANY, "x"), http.StatusTooManyRequests},
		{stacks.Errorf(stacks.EINTERNAL, "x"), http.StatusInternalServerError},
		{stacks.Errorf("no such code", "x"), http.StatusInternalServerError},
		{fmt.Errorf("read patron 7: %w", stacks.Errorf(stacks.ENOTFOUND, "x")), http.StatusNotFound},
		{sql.ErrNoRows, http.StatusNotFound},
		{fmt.Errorf("read patron 7: %w", sql.ErrNoRows), http.StatusNotFound},
		{errors.New("connection refused"), http.StatusInternalServerError},
		{sql.ErrConnDone, http.StatusInternalServerError},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestFailure: a stacks error shows its message and is not logged; a bare
// sql.ErrNoRows is a 404 with a message of its own, not logged; any other
// error, an outage included, is a 500 with a generic message, and is logged.
func TestFailure(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/patrons/7", nil)
	for _, tc := range []struct {
		err    error
		status int
		msg    string
		logged bool
	}{
		{stacks.Errorf(stacks.ECONFLICT, "It is on loan."), http.StatusConflict, "It is on loan.", false},
		{stacks.Errorf(stacks.ENOTFOUND, "No patron 7."), http.StatusNotFound, "No patron 7.", false},
		{fmt.Errorf("find: %w", sql.ErrNoRows), http.StatusNotFound, NotFoundMessage, false},
		{errors.New("database is locked"), http.StatusInternalServerError, stacks.ErrorMessage(errors.New("")), true},
	} {
		logger, logged := logTo()
		status, msg := Failure(logger, r, tc.err)
		if status != tc.status || msg != tc.msg {
			t.Errorf("Failure(%v) = %d %q, want %d %q", tc.err, status, msg, tc.status, tc.msg)
		}
		if got := strings.Contains(logged.String(), "request failed"); got != tc.logged {
			t.Errorf("Failure(%v) logged %v, want %v: %s", tc.err, got, tc.logged, logged)
		}
		if tc.logged && (!strings.Contains(logged.String(), "database is locked") || !strings.Contains(logged.String(), "/patrons/7")) {
			t.Errorf("the log line lacks the error or the path: %s", logged)
		}
		if strings.Contains(msg, "locked") {
			t.Errorf("the message shows the internal error: %q", msg)
		}
	}
}

func TestBusy(t *testing.T) {
	w := httptest.NewRecorder()
	if status := Busy(w); status != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Errorf("Busy: %d, Retry-After %q", status, w.Header().Get("Retry-After"))
	}
}
