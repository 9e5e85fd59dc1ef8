package privacy

import (
	"context"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// Service runs the staff's privacy pages (a patron's export, deleting a
// patron), each method in its own transactions.
type Service struct {
	DB *db.DB
}

// NewService returns a Service on d.
func NewService(d *db.DB) *Service { return &Service{DB: d} }

// Export reads patron id's data in a read transaction, so that a large export
// holds up no desk, then records the export in the audit log in a short write
// transaction; the data is returned only once the audit entry is stored.
func (s *Service) Export(ctx context.Context, actor stacks.Actor, id int64) (e *Export, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		e, err = readExport(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.DB.Write(ctx, func(tx *db.Tx) error { return auditExport(tx, actor, id) }); err != nil {
		return nil, err
	}
	return e, nil
}

// PurgeCheck reads the patron and why they may not be deleted now ("" when
// they may), in one read transaction.
func (s *Service) PurgeCheck(ctx context.Context, id int64) (p *patrons.Patron, blockers string, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if p, err = patrons.FindByID(tx, id); err != nil {
			return err
		}
		blockers, err = PurgeBlockers(tx, id)
		return err
	})
	return p, blockers, err
}

// Purge deletes the patron and every row about them (see Purge).
func (s *Service) Purge(ctx context.Context, actor stacks.Actor, id int64) error {
	return Purge(ctx, s.DB, actor, id)
}
