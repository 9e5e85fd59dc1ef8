package reports

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Service runs the reports, the saved SQL reports and the stocktakes: each
// method opens its transaction and commits it. A standard report and a
// stocktake's results are heavy reads (their cost is staff's choice): they run
// in one of the heavy-read slots, within HeavyTimeout, so that they never take
// the desk's connection.
type Service struct {
	DB *db.DB
	// HeavyTimeout bounds a standard report and a stocktake's results; past
	// it the read is stopped and staff are asked to narrow it.
	HeavyTimeout time.Duration
	// Logger hears of a rollup that failed before a report (which then runs on
	// the statistics as last rolled up); nil is slog.Default().
	Logger *slog.Logger
}

// NewService returns a Service whose heavy reads stop after heavyTimeout.
func NewService(d *db.DB, heavyTimeout time.Duration, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.Default()
	}
	return &Service{DB: d, HeavyTimeout: heavyTimeout, Logger: logger}
}

// ReportPage is what a standard report's page shows: the form's choices, and
// the result once the report ran.
type ReportPage struct {
	Choices Choices
	Result  *Result
}

// Report reads the choices of def's form, then, when values make a filter
// (ParseFilter), runs the report (Run). The choices come back with any error:
// a field error for a filter not understood, EINVALID for a report past
// HeavyTimeout, ETOOMANY (db.ErrHeavyBusy) when every slot stayed taken.
func (s *Service) Report(ctx context.Context, def Definition, values url.Values) (ReportPage, error) {
	var p ReportPage
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		p.Choices, err = ListChoices(tx)
		return err
	})
	if err != nil {
		return p, err
	}
	f, err := def.ParseFilter(values)
	if err != nil {
		return p, err
	}
	res, err := s.Run(ctx, def, f)
	if err != nil {
		return p, err
	}
	p.Result = &res
	return p, nil
}

// Run runs the standard report def with f as a heavy read, within
// HeavyTimeout (f.Emit, if set, is handed the rows as they are read). A
// report on the rolled-up statistics counts the loans issued since the last
// rollup first (stacks serve rolls up every minute, so this is a few at
// most); if that fails the report still runs, on the statistics as last
// rolled up, and the page says when that was.
func (s *Service) Run(ctx context.Context, def Definition, f Filter) (Result, error) {
	if def.Rolled {
		if _, err := Rollup(ctx, s.DB); err != nil {
			s.logger().Warn("report rollup", "report", def.Slug, "err", err)
		}
	}
	var res Result
	tooLong := stacks.Errorf(stacks.EINVALID, "The report took longer than %s and was stopped: narrow it (a shorter period, one branch) and run it again.", s.HeavyTimeout)
	err := s.DB.ReadBounded(ctx, s.HeavyTimeout, tooLong, func(tx *db.Tx) (err error) {
		res, err = def.Run(tx, f)
		return err
	})
	return res, err
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// SavedReports returns the saved SQL reports by name.
func (s *Service) SavedReports(ctx context.Context) ([]SavedReport, error) {
	var rs []SavedReport
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		rs, err = listSaved(tx)
		return err
	})
	return rs, err
}

// SavedReport returns the saved SQL report id.
func (s *Service) SavedReport(ctx context.Context, id int64) (SavedReport, error) {
	var r SavedReport
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		r, err = findSaved(tx, id)
		return err
	})
	return r, err
}

// SaveReport creates a saved SQL report (id 0) or replaces one, after
// SavedInput.Validate, and returns its id; the audit log records who did.
func (s *Service) SaveReport(ctx context.Context, actor stacks.Actor, id int64, in SavedInput) (int64, error) {
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		id, err = saveSQL(tx, actor, id, in)
		return err
	})
	return id, err
}

// DeleteReport deletes the saved SQL report id.
func (s *Service) DeleteReport(ctx context.Context, actor stacks.Actor, id int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		return deleteSaved(tx, actor, id)
	})
}

// RunReport runs the saved SQL report r with its parameters' values within
// lim (RunSQL: on a connection and, on PostgreSQL, a role of its own), and
// records the run in the audit log (on the page, or as a CSV file) before its
// rows are shown.
func (s *Service) RunReport(ctx context.Context, actor stacks.Actor, r SavedReport, values map[string]string, lim Limits, csv bool) (Result, error) {
	res, err := RunSQL(ctx, s.DB, r.SQL, values, lim)
	if err != nil {
		return res, err
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		return auditRun(tx, actor, r.ID, values, res, csv)
	})
	return res, err
}

// StocktakeStart is the Stocktake page: the branches, the shelving locations
// in use at each, and the latest stocktakes.
type StocktakeStart struct {
	Branches  []Choice
	Locations []BranchLocations
	Recent    []Stocktake
}

// StocktakeStart reads the Stocktake page, with the latest recent
// stocktakes, in one read transaction.
func (s *Service) StocktakeStart(ctx context.Context, recent int) (StocktakeStart, error) {
	var st StocktakeStart
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		c, err := ListChoices(tx)
		if err != nil {
			return err
		}
		st.Branches = c.Branches
		if st.Locations, err = stocktakeLocations(tx); err != nil {
			return err
		}
		st.Recent, err = recentStocktakes(tx, recent)
		return err
	})
	return st, err
}

// StartStocktake starts a stocktake of a call number range or a location at
// a branch, and returns its id.
func (s *Service) StartStocktake(ctx context.Context, actor stacks.Actor, in StocktakeInput) (int64, error) {
	var id int64
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		id, err = startStocktake(tx, actor, in)
		return err
	})
	return id, err
}

// errStocktakeTooLong is a stocktake whose results took past HeavyTimeout.
var errStocktakeTooLong = stacks.Errorf(stacks.EINVALID, "Working out the stocktake took too long and was stopped: stocktake a shorter call number range, or one location, at a time.")

// StocktakeResults works out the stocktake id: its scans, and what is missing
// or out of place. It reads every item in the stocktake's range: a heavy read,
// within HeavyTimeout.
func (s *Service) StocktakeResults(ctx context.Context, id int64) (StocktakeResult, error) {
	var res StocktakeResult
	err := s.DB.ReadBounded(ctx, s.HeavyTimeout, errStocktakeTooLong, func(tx *db.Tx) (err error) {
		res, err = results(tx, id)
		return err
	})
	return res, err
}

// Scan records a barcode scanned on the stocktake's shelf (see scan).
func (s *Service) Scan(ctx context.Context, stocktakeID int64, barcode string) (StocktakeScan, error) {
	var sc StocktakeScan
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		sc, err = scan(tx, stocktakeID, barcode)
		return err
	})
	return sc, err
}

// CheckCheckin allows a check-in from the stocktake's results only for an
// item scanned in that stocktake and on loan, lost or missing now (see
// checkCheckin); the caller then checks it in.
func (s *Service) CheckCheckin(ctx context.Context, stocktakeID int64, barcode string) error {
	return s.DB.Read(ctx, func(tx *db.Tx) error {
		return checkCheckin(tx, stocktakeID, barcode)
	})
}
