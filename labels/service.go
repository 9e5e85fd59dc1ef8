package labels

import (
	"context"
	"io"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/reports"
)

// Service reads the labels to print and draws them, each sheet in its own
// transaction.
type Service struct {
	DB *db.DB
	// timeout bounds a sheet's read: its size is the reader's choice.
	timeout time.Duration
}

// NewService returns a Service reading d, a sheet at most for timeout.
func NewService(d *db.DB, timeout time.Duration) *Service {
	return &Service{DB: d, timeout: timeout}
}

// Request is a sheet of labels to print: how, and which labels.
type Request struct {
	Options
	// Lines are the barcodes, or for patron cards the card numbers, to print.
	Lines []string
	// Since, when set, prints the items added since the day AddedSince (at
	// BranchID, or at every branch when it is 0) instead of Lines.
	Since      bool
	AddedSince time.Time
	BranchID   int64
	// LibraryName heads a patron card.
	LibraryName string
}

// tooLong is what a sheet past its deadline says, beside the field that
// chose its labels.
func (q Request) tooLong() error {
	if q.Since && q.Kind != KindPatron {
		return stacks.FieldErrorf("since", stacks.EINVALID, "Finding the items took too long and was stopped: narrow it with a later day or one branch.")
	}
	return stacks.FieldErrorf("barcodes", stacks.EINVALID, "Finding the labels took too long and was stopped: print fewer at a time.")
}

// find reads the labels q asks for.
func (q Request) find(tx *db.Tx) ([]Label, error) {
	switch {
	case q.Kind == KindPatron:
		return patronCards(tx, q.LibraryName, q.Lines)
	case q.Since:
		return itemsAddedSince(tx, q.AddedSince, q.BranchID)
	default:
		return itemsByBarcode(tx, q.Lines)
	}
}

// Branches lists the branches a sheet of new items may be narrowed to.
func (s *Service) Branches(ctx context.Context) ([]reports.Choice, error) {
	var c reports.Choices
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		c, err = reports.ListChoices(tx)
		return err
	})
	return c.Branches, err
}

// Sheet reads the labels q asks for and draws them, and, when pdf is not nil,
// writes them to it as a PDF: all of it as a heavy read (db.ReadBounded), so
// that label sheets, however many or large, cannot take the desk's read
// connection or its share of the processor from it. Past the deadline the
// error says what to narrow; every slot taken is db.ErrHeavyBusy.
func (s *Service) Sheet(ctx context.Context, q Request, pdf io.Writer) (ds []Drawing, err error) {
	err = s.DB.ReadBounded(ctx, s.timeout, q.tooLong(), func(tx *db.Tx) error {
		ls, err := q.find(tx)
		if err != nil {
			return err
		}
		if ds, err = Draw(q.Options, ls); err != nil || pdf == nil {
			return err
		}
		return WritePDF(pdf, q.Options, ds, "Labels")
	})
	return ds, err
}
