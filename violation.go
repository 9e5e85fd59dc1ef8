package stacks

import "fmt"

// Violation is one broken invariant found in a database by `stacks check`: which
// check failed and, in Detail, what exactly is wrong and where (ids, barcodes,
// cards), so that whoever repairs the data can find the rows. The domain packages
// that own the tables state their invariants as functions returning violations;
// the command only gathers them.
type Violation struct {
	// Check names the invariant, such as "loan-item-not-on-loan".
	Check string
	// Detail says what is wrong and where.
	Detail string
}

// String writes the violation as `stacks check` prints it.
func (v Violation) String() string { return fmt.Sprintf("%s: %s", v.Check, v.Detail) }
