package patrons

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Service runs the patron pages' reads and changes against the library
// database, each method in its own transaction: the staff pages (the patron
// form, search, the ledger's forms, receipts and cash-up, the patron load) and
// the patron's own (My account's fines, PIN and history choice, the sign-in
// check of a session). The tx-taking functions of the package are for
// composing inside other domains' transactions.
type Service struct {
	DB *db.DB
}

// NewService returns a Service on d.
func NewService(d *db.DB) *Service { return &Service{DB: d} }

// Choices are the lists the patron form and the patron load offer.
type Choices struct {
	Categories []Category
	Branches   []library.Branch
}

// choices reads the categories and the branches in tx.
func choices(tx *db.Tx) (c Choices, err error) {
	if c.Categories, err = ListCategories(tx); err != nil {
		return Choices{}, err
	}
	c.Branches, err = library.ListBranches(tx)
	return c, err
}

// Choices reads the categories and branches a patron can be given.
func (s *Service) Choices(ctx context.Context) (c Choices, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		c, err = choices(tx)
		return err
	})
	return c, err
}

// PatronToEdit reads the patron and the form's choices in one read transaction.
func (s *Service) PatronToEdit(ctx context.Context, id int64) (p *Patron, c Choices, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if p, err = FindByID(tx, id); err != nil {
			return err
		}
		c, err = choices(tx)
		return err
	})
	return p, c, err
}

// Patron reads one patron (ENOTFOUND if there is none).
func (s *Service) Patron(ctx context.Context, id int64) (p *Patron, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		p, err = FindByID(tx, id)
		return err
	})
	return p, err
}

// SessionPatron is Patron in a one-statement read (db.DB.ReadOne), for the
// check every signed-in request makes of its session's patron.
func (s *Service) SessionPatron(ctx context.Context, id int64) (p *Patron, err error) {
	err = s.DB.ReadOne(ctx, func(tx *db.Tx) (err error) {
		p, err = FindByID(tx, id)
		return err
	})
	return p, err
}

// Register creates a patron from in.
func (s *Service) Register(ctx context.Context, actor stacks.Actor, in Input) (p *Patron, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		p, err = Create(tx, actor, in)
		return err
	})
	return p, err
}

// Edit saves in over patron id.
func (s *Service) Edit(ctx context.Context, actor stacks.Actor, id int64, in Input) (p *Patron, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		p, err = Update(tx, actor, id, in)
		return err
	})
	return p, err
}

// Find lists at most limit patrons matching q (see Search), and the database's
// time of the search.
func (s *Service) Find(ctx context.Context, q string, limit int) (found []Patron, now time.Time, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		now = tx.Now()
		found, err = Search(tx, q, limit)
		return err
	})
	return found, now, err
}

// Pay takes a payment (see PayLines) and returns its receipt and the balance
// after it.
func (s *Service) Pay(ctx context.Context, actor stacks.Actor, req PayRequest) (receipt, balance int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if receipt, err = PayLines(tx, actor, req); err != nil {
			return err
		}
		balance, err = Balance(tx, req.PatronID)
		return err
	})
	return receipt, balance, err
}

// Refund hands back the patron's credit (see Refund) and returns its receipt.
func (s *Service) Refund(ctx context.Context, actor stacks.Actor, patronID, cents int64, method, note string) (receipt int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		receipt, err = Refund(tx, actor, patronID, cents, method, note)
		return err
	})
	return receipt, err
}

// Charge adds a manual charge of a configured type (see ChargeManual; cents 0
// is the type's default) and returns the balance after it.
func (s *Service) Charge(ctx context.Context, actor stacks.Actor, patronID int64, code string, cents int64, note string) (balance int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if _, err = ChargeManual(tx, actor, patronID, code, cents, note); err != nil {
			return err
		}
		balance, err = Balance(tx, patronID)
		return err
	})
	return balance, err
}

// Waive forgives charges (see WaiveLines) and returns how much it waived and
// the balance after it.
func (s *Service) Waive(ctx context.Context, actor stacks.Actor, req WaiveRequest) (waived, balance int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if _, waived, err = WaiveLines(tx, actor, req); err != nil {
			return err
		}
		balance, err = Balance(tx, req.PatronID)
		return err
	})
	return waived, balance, err
}

// Block blocks the patron, or lifts the block, with a note (see SetBlock).
func (s *Service) Block(ctx context.Context, actor stacks.Actor, id int64, blocked bool, note string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetBlock(tx, actor, id, blocked, note) })
}

// SetPIN stores a PIN already hashed (HashPIN, outside the transaction: the
// hash is slow on purpose).
func (s *Service) SetPIN(ctx context.Context, actor stacks.Actor, id int64, hash string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetPINHash(tx, actor, id, hash) })
}

// Sessions names where a site keeps its signed-in sessions: the table, and
// the session value that holds the patron's id.
type Sessions struct {
	Table    string
	PatronID string
}

// ChangePIN stores the patron's new PIN, already hashed, and ends every
// session signed in as them in sessions, in one write transaction: a changed
// PIN signs the patron out everywhere. It returns the PIN's new generation,
// for the session that changed it to stay signed in.
func (s *Service) ChangePIN(ctx context.Context, actor stacks.Actor, id int64, hash string, sessions Sessions) (generation int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := SetPINHash(tx, actor, id, hash); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT pin_generation FROM patrons WHERE id = ?`, id).Scan(&generation); err != nil {
			return fmt.Errorf("read the PIN generation of patron %d: %w", id, err)
		}
		_, err := tx.Exec(`DELETE FROM `+sessions.Table+` WHERE `+db.SessionValue(tx, sessions.PatronID)+` = ?`, id)
		return err
	})
	return generation, err
}

// KeepHistory stores the patron's choice to keep their loan history, or not.
func (s *Service) KeepHistory(ctx context.Context, actor stacks.Actor, id int64, keep bool) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetKeepHistory(tx, actor, id, keep) })
}

// Statement reads the patron's ledger, newest first.
func (s *Service) Statement(ctx context.Context, id int64) (entries []LedgerEntry, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		entries, err = Ledger(tx, id)
		return err
	})
	return entries, err
}

// Receipt reads the receipt of a payment or refund.
func (s *Service) Receipt(ctx context.Context, id int64) (rc Receipt, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		rc, err = FindReceipt(tx, id)
		return err
	})
	return rc, err
}

// CashUpRequest picks a desk's day: the branch by code (empty: the branch of
// id DefaultBranchID, else the first), the day (empty: today in Location).
type CashUpRequest struct {
	BranchCode      string
	DefaultBranchID int64
	Day             string
	Location        *time.Location
}

// CashUpPage is a desk's day, with the branches to choose from.
type CashUpPage struct {
	Branches []library.Branch
	Branch   library.Branch
	CashUp   CashUp
}

// CashUp reads the cash-up of a desk's day in one read transaction.
func (s *Service) CashUp(ctx context.Context, req CashUpRequest) (v CashUpPage, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		day := req.Day
		if day == "" {
			day = tx.Now().In(req.Location).Format(db.DayFormat)
		}
		bs, err := library.ListBranches(tx)
		if err != nil {
			return err
		}
		v.Branches = bs
		for _, b := range bs {
			if (req.BranchCode == "" && b.ID == req.DefaultBranchID) || (req.BranchCode != "" && b.Code == req.BranchCode) {
				v.Branch = b
			}
		}
		if v.Branch.ID == 0 {
			if req.BranchCode != "" || len(bs) == 0 {
				return stacks.Errorf(stacks.ENOTFOUND, "There is no branch %q; choose one from the list.", req.BranchCode)
			}
			v.Branch = bs[0]
		}
		v.CashUp, err = FindCashUp(tx, v.Branch.ID, day, req.Location)
		return err
	})
	return v, err
}

// CheckLoad reads and checks a patron file (see CheckLoad).
func (s *Service) CheckLoad(ctx context.Context, r io.Reader, opt LoadOptions) (*LoadResult, error) {
	return CheckLoad(ctx, s.DB, r, opt)
}

// ApplyLoad writes a checked patron file (see ApplyLoad).
func (s *Service) ApplyLoad(ctx context.Context, res *LoadResult, opt LoadOptions) error {
	return ApplyLoad(ctx, s.DB, res, opt)
}
