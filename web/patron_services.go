package web

import (
	"context"
	"io"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/privacy"
)

// patronServices are the domain services behind the patron pages, each field
// the small interface its handlers declare beside them.
type patronServices struct {
	// page is the patron page itself, read where patrons, loans, holds and
	// notices meet (circulation.Service).
	page    patronPageService
	form    patronFormService
	actions patronActionsService
	money   moneyService
	claims  claimsService
	load    patronLoadService
	privacy patronPrivacyService
}

// newPatronServices builds them on d; circ is the server's circulation
// service, which reads the patron page and the claims.
func newPatronServices(d *db.DB, circ *circulation.Service) patronServices {
	p := patrons.NewService(d)
	return patronServices{page: circ, claims: circ, form: p, actions: p, money: p, load: p, privacy: privacy.NewService(d)}
}

// patronPageService reads the patron page and saves its Notices form.
type patronPageService interface {
	PatronPage(ctx context.Context, id int64, noticesShown int) (circulation.PatronPage, error)
	SetPatronNoticeChoices(ctx context.Context, actor stacks.Actor, id int64, choices map[string]string) (*patrons.Patron, error)
}

// patronFormService is what the patron form and search ask of patrons.
type patronFormService interface {
	Choices(ctx context.Context) (patrons.Choices, error)
	PatronToEdit(ctx context.Context, id int64) (*patrons.Patron, patrons.Choices, error)
	Register(ctx context.Context, actor stacks.Actor, in patrons.Input) (*patrons.Patron, error)
	Edit(ctx context.Context, actor stacks.Actor, id int64, in patrons.Input) (*patrons.Patron, error)
	Find(ctx context.Context, q string, limit int) ([]patrons.Patron, time.Time, error)
}

// patronActionsService is what the patron page's forms ask of patrons.
type patronActionsService interface {
	Pay(ctx context.Context, actor stacks.Actor, req patrons.PayRequest) (receipt, balance int64, err error)
	Refund(ctx context.Context, actor stacks.Actor, patronID, cents int64, method, note string) (int64, error)
	Charge(ctx context.Context, actor stacks.Actor, patronID int64, code string, cents int64, note string) (int64, error)
	Waive(ctx context.Context, actor stacks.Actor, req patrons.WaiveRequest) (waived, balance int64, err error)
	Block(ctx context.Context, actor stacks.Actor, id int64, blocked bool, note string) error
	SetPIN(ctx context.Context, actor stacks.Actor, id int64, hash string) error
}

// moneyService is what the receipt, cash-up and lost-item pages ask of patrons.
type moneyService interface {
	Patron(ctx context.Context, id int64) (*patrons.Patron, error)
	Receipt(ctx context.Context, id int64) (patrons.Receipt, error)
	CashUp(ctx context.Context, req patrons.CashUpRequest) (patrons.CashUpPage, error)
}

// claimsService reads the claims-returned list.
type claimsService interface {
	ClaimsReturned(ctx context.Context, branchCode string, f circulation.ClaimsFilter) (circulation.Claims, error)
}

// patronLoadService is what the patron load pages ask of patrons.
type patronLoadService interface {
	Choices(ctx context.Context) (patrons.Choices, error)
	CheckLoad(ctx context.Context, r io.Reader, opt patrons.LoadOptions) (*patrons.LoadResult, error)
	ApplyLoad(ctx context.Context, res *patrons.LoadResult, opt patrons.LoadOptions) error
}

// patronPrivacyService is what the export and delete pages ask of privacy.
type patronPrivacyService interface {
	Export(ctx context.Context, actor stacks.Actor, id int64) (*privacy.Export, error)
	PurgeCheck(ctx context.Context, id int64) (*patrons.Patron, string, error)
	Purge(ctx context.Context, actor stacks.Actor, id int64) error
}
