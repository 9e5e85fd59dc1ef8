package kit

import (
	"database/sql"
	"errors"
	"log/slog"
	"net/http"

	"github.com/stacks-ils/stacks"
)

// codeStatus is the one map from a stacks error code to an HTTP status.
var codeStatus = map[string]int{
	stacks.EINVALID:      http.StatusUnprocessableEntity,
	stacks.ENOTFOUND:     http.StatusNotFound,
	stacks.ECONFLICT:     http.StatusConflict,
	stacks.EUNAUTHORIZED: http.StatusUnauthorized,
	stacks.EFORBIDDEN:    http.StatusForbidden,
	stacks.ETOOMANY:      http.StatusTooManyRequests,
}

// CodeStatus maps a stacks error code to an HTTP status; EINTERNAL and any
// code it does not know are 500.
func CodeStatus(code string) int {
	if status, ok := codeStatus[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// NotFoundMessage is shown for a bare sql.ErrNoRows, which no domain method
// worded.
const NotFoundMessage = "There is nothing here: it may have been deleted, or the address is wrong."

// Status returns the HTTP status of err. Only ENOTFOUND and sql.ErrNoRows are
// 404: any other error that is not a stacks error, an outage included, is 500.
func Status(err error) int {
	code := stacks.ErrorCode(err)
	if code == stacks.EINTERNAL && errors.Is(err, sql.ErrNoRows) {
		return http.StatusNotFound
	}
	return CodeStatus(code)
}

// Failure returns the status and the message to show for err, which a handler
// could not get past: the message of a stacks error, NotFoundMessage for a bare
// sql.ErrNoRows, and for anything else a generic message. A fault of ours (a
// 500) is logged to logger with the request's method and path.
func Failure(logger *slog.Logger, r *http.Request, err error) (status int, message string) {
	status = Status(err)
	if status == http.StatusInternalServerError {
		logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else if stacks.ErrorCode(err) == stacks.EINTERNAL {
		return status, NotFoundMessage
	}
	return status, stacks.ErrorMessage(err)
}

// Busy answers a search or heavy read that found every slot taken (ETOOMANY
// from db.ErrHeavyBusy): it asks the browser to try again in a second and
// returns the status to answer, 503, which is the server's state, not the
// user's fault (CodeStatus's 429 is for a throttled user).
func Busy(w http.ResponseWriter) int {
	w.Header().Set("Retry-After", "1")
	return http.StatusServiceUnavailable
}
