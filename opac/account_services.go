package opac

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// accountService is what My account and its hold forms ask of circulation,
// where the patron's loans, holds and balance meet.
type accountService interface {
	Account(ctx context.Context, patronID int64) (circulation.Account, error)
	PauseHold(ctx context.Context, actor stacks.Actor, holdID int64, until string, loc *time.Location) error
	ResumeHold(ctx context.Context, actor stacks.Actor, holdID int64) error
	ChangePickup(ctx context.Context, actor stacks.Actor, holdID int64, code string) (string, error)
	HoldForm(ctx context.Context, recordID int64) (circulation.HoldForm, error)
}

// holdReader reads one hold, for the hold forms to check it is the patron's.
type holdReader interface {
	Hold(ctx context.Context, id int64) (holds.Hold, error)
}

// patronsService is what the patron's own pages and the session check ask of
// patrons.
type patronsService interface {
	SessionPatron(ctx context.Context, id int64) (*patrons.Patron, error)
	Statement(ctx context.Context, id int64) ([]patrons.LedgerEntry, error)
	ChangePIN(ctx context.Context, actor stacks.Actor, id int64, hash string, sessions patrons.Sessions) (int64, error)
	KeepHistory(ctx context.Context, actor stacks.Actor, id int64, keep bool) error
}

// accountServices are the services behind My account, built on d; circ is the
// server's circulation service.
type accountServices struct {
	account accountService
	holds   holdReader
	patrons patronsService
}

func newAccountServices(d *db.DB, circ *circulation.Service) accountServices {
	return accountServices{account: circ, holds: holds.NewService(d), patrons: patrons.NewService(d)}
}
