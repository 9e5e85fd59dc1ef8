package circulation

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// RecordHolds is a record as the staff's record page shows it: its copies and
// its open holds, read in one transaction.
type RecordHolds struct {
	Record *catalog.Record
	Copies []catalog.CopyStatus
	Queue  []holds.Hold
	// Now is when it was read.
	Now time.Time
}

// RecordWithHolds reads a record, its copies and its open holds (the queue in
// order).
func (s *Service) RecordWithHolds(ctx context.Context, id int64) (r RecordHolds, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		r.Now = tx.Now()
		if r.Record, r.Copies, err = catalog.FindRecord(tx, id); err != nil {
			return err
		}
		r.Queue, err = holds.RecordQueue(tx, id)
		return err
	})
	return r, err
}

// RecordWithQueueLength reads a record, its copies and how many holds wait
// for it, without who placed them: what a patron may know.
func (s *Service) RecordWithQueueLength(ctx context.Context, id int64) (rec *catalog.Record, copies []catalog.CopyStatus, queue int, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if rec, copies, err = catalog.FindRecord(tx, id); err != nil {
			return err
		}
		queue, err = holds.QueueLength(tx, id)
		return err
	})
	return rec, copies, queue, err
}

// IdentifyPatron finds the patron a hold form's "Card number" field names
// (patrons.Identify): one patron, or at most limit matches to choose from.
func (s *Service) IdentifyPatron(ctx context.Context, input string, limit int) (found patrons.Identified, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		found, err = patrons.Identify(tx, input, limit)
		return err
	})
	return found, err
}
