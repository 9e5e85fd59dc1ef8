// Package stacks holds what every part of the library system shares: the error type
// whose codes the web and SIP layers turn into answers.
package stacks

import (
	"errors"
	"fmt"
)

// Error codes. The web layer maps each to an HTTP status, SIP to its own fields.
const (
	EINTERNAL     = "internal"     // a fault of ours: logged, never shown in detail
	EINVALID      = "invalid"      // the request is wrong; the message says how to fix it
	ENOTFOUND     = "not_found"    // no such patron, item, record...
	ECONFLICT     = "conflict"     // the state forbids it (already on loan, ...)
	EUNAUTHORIZED = "unauthorized" // not signed in, or wrong credentials
	EFORBIDDEN    = "forbidden"    // signed in, but the role does not allow it
	ETOOMANY      = "too_many"     // throttled
)

// Error is an error meant for people: Message says what happened and what to do.
type Error struct {
	Code    string
	Message string
	// Field names the form field the error is about, if any.
	Field string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("stacks error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf is Errorf for a message about one form field.
func FieldErrorf(field, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Field: field}
}

// ErrorCode returns the code of an *Error in err's chain, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of an *Error in err's chain; for any other
// error, a generic message, so internal details never reach a user.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side; the problem has been logged. Please try again."
}

// ErrorField returns the form field an *Error in err's chain is about, if any.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
