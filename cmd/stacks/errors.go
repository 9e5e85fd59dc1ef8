package main

import (
	"errors"

	"github.com/stacks-ils/stacks"
)

// userFacing turns a domain error into its message for the terminal.
func userFacing(err error) error {
	var e *stacks.Error
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	return err
}
