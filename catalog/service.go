package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Service runs the catalogue's transactions: each method opens its own and
// commits it, so that the staff site and the OPAC call one method a page.
type Service struct {
	DB *db.DB
	// searchTimeout bounds a search, harvestTimeout an OAI-PMH harvest's read.
	searchTimeout, harvestTimeout time.Duration
}

// Timeouts bound the reads whose cost the reader chooses; a zero one leaves
// its reads unbounded but for the request's own context.
type Timeouts struct {
	Search  time.Duration
	Harvest time.Duration
}

// NewService returns a Service reading and writing d.
func NewService(d *db.DB, t Timeouts) *Service {
	return &Service{DB: d, searchTimeout: t.Search, harvestTimeout: t.Harvest}
}

// withTimeout bounds ctx by d when d is set.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Search runs a catalogue search on a heavy-read slot (db.ReadHeavy), within
// the search timeout: a search's cost is the searcher's choice, so searches
// cannot stall the desk. A search that waits past its deadline before it began
// is ErrSearchTooLong too; every slot taken is db.ErrBusy.
func (s *Service) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	ctx, cancel := withTimeout(ctx, s.searchTimeout)
	defer cancel()
	var res SearchResult
	err := s.DB.ReadHeavy(ctx, func(tx *db.Tx) (err error) {
		res, err = Search(tx, q)
		return err
	})
	if err != nil && stacks.ErrorCode(err) == stacks.EINTERNAL && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = ErrSearchTooLong
	}
	return res, err
}

// CreateRecord adds a record typed in by hand and returns its id.
func (s *Service) CreateRecord(ctx context.Context, actor stacks.Actor, in RecordInput) (id int64, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		id, err = CreateRecord(tx, actor, in)
		return err
	})
	return id, err
}

// UpdateRecord saves a record's edit form.
func (s *Service) UpdateRecord(ctx context.Context, actor stacks.Actor, id int64, in RecordInput) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return UpdateRecord(tx, actor, id, in) })
}

// RecordInput returns a record as its edit form shows it.
func (s *Service) RecordInput(ctx context.Context, id int64) (in RecordInput, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		in, err = RecordInputOf(tx, id)
		return err
	})
	return in, err
}

// ItemForm is what the item form shows besides what was typed: the record,
// the item as saved (for an existing one) and the choices.
type ItemForm struct {
	RecordID    int64
	RecordTitle string
	// Item is the saved item; nil on a new item's form.
	Item *ItemDetails
	// Defaults is what a new copy most likely shares with the record's newest
	// (NewItemDefaults); only NewItemForm fills it.
	Defaults  ItemInput
	ItemTypes []library.Named
	Branches  []library.Branch
}

// ItemForm reads the form of item itemID, or, when itemID is 0, of a new copy
// of record recordID.
func (s *Service) ItemForm(ctx context.Context, itemID, recordID int64) (f ItemForm, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error { return loadItemForm(tx, &f, itemID, recordID) })
	return f, err
}

// NewItemForm reads the form of a new copy of record recordID, filled in as
// its newest copy is.
func (s *Service) NewItemForm(ctx context.Context, recordID int64) (f ItemForm, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if f.Defaults, _, err = newItemDefaults(tx, recordID); err != nil {
			return err
		}
		return loadItemForm(tx, &f, 0, recordID)
	})
	return f, err
}

func loadItemForm(tx *db.Tx, f *ItemForm, itemID, recordID int64) error {
	f.RecordID = recordID
	if itemID != 0 {
		d, err := FindItemDetails(tx, itemID)
		if err != nil {
			return err
		}
		f.Item, f.RecordID, f.RecordTitle = d, d.RecordID, d.Title
	} else {
		rec, err := RecordInputOf(tx, recordID)
		if err != nil {
			return err
		}
		f.RecordTitle = rec.Title
	}
	var err error
	if _, f.ItemTypes, err = library.ListScopes(tx); err != nil {
		return err
	}
	f.Branches, err = library.ListBranches(tx)
	return err
}

// CheckNewBarcode normalizes the barcode of a copy about to be added and
// checks that no item has it yet (checkNewBarcode).
func (s *Service) CheckNewBarcode(ctx context.Context, barcode string) (out string, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		out, err = checkNewBarcode(tx, barcode)
		return err
	})
	return out, err
}

// AddItem adds a copy to record recordID and returns it as saved.
func (s *Service) AddItem(ctx context.Context, actor stacks.Actor, recordID int64, in ItemInput) (it *Item, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		id, err := AddItem(tx, actor, recordID, in)
		if err != nil {
			return err
		}
		it, err = FindItem(tx, id)
		return err
	})
	return it, err
}

// UpdateItem saves an item's edit form and returns the item as saved.
func (s *Service) UpdateItem(ctx context.Context, actor stacks.Actor, id int64, in ItemInput, status string) (res ItemSaved, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if res.HoldsCancelled, err = UpdateItem(tx, actor, id, in, status); err != nil {
			return err
		}
		res.Item, err = FindItem(tx, id)
		return err
	})
	return res, err
}

// ItemSaved is an item as its form saved it, and what saving did besides.
type ItemSaved struct {
	Item *Item
	// HoldsCancelled counts the holds on this very copy that withdrawing it
	// cancelled: the desk tells their patrons.
	HoldsCancelled int
}

// RecordWithBranches reads a record, its copies and the branches (a pickup
// branch to choose).
func (s *Service) RecordWithBranches(ctx context.Context, id int64) (rec *Record, copies []CopyStatus, branches []library.Branch, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if rec, copies, err = FindRecord(tx, id); err != nil {
			return err
		}
		branches, err = library.ListBranches(tx)
		return err
	})
	return rec, copies, branches, err
}

// ImportChoices reads the branches and item types an import's copies may get.
func (s *Service) ImportChoices(ctx context.Context) (branches []library.Branch, itemTypes []library.Named, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		_, itemTypes, err = library.ListScopes(tx)
		return err
	})
	return branches, itemTypes, err
}

// Import reads MARC records from rr into the catalogue (Import), a batch a
// transaction.
func (s *Service) Import(ctx context.Context, rr marc.RecordReader, opt ImportOptions) (ImportSummary, error) {
	return Import(ctx, s.DB, rr, opt)
}

// ErrHarvestBusy is a harvest read refused for lack of a heavy-read slot, or
// stopped at its deadline: the harvester should come back in a moment.
var ErrHarvestBusy = errors.New("catalog: harvest busy")

// harvestRead runs a harvest read as a search runs: on a heavy-read slot
// (db.ReadHeavy), so that harvesters cannot take every read connection from
// the desk, and within the harvest timeout.
func (s *Service) harvestRead(ctx context.Context, fn func(*db.Tx) error) error {
	ctx, cancel := withTimeout(ctx, s.harvestTimeout)
	defer cancel()
	err := s.DB.ReadHeavy(ctx, fn)
	if errors.Is(err, db.ErrBusy) || (err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		return fmt.Errorf("%w: %w", ErrHarvestBusy, err)
	}
	return err
}

// Harvest returns a page of records for OAI-PMH, and whether more follow.
func (s *Service) Harvest(ctx context.Context, q HarvestQuery) (page []HarvestRecord, more bool, err error) {
	err = s.harvestRead(ctx, func(tx *db.Tx) error {
		page, more, err = harvest(tx, q)
		return err
	})
	return page, more, err
}

// HarvestRecord returns one record, live or deleted, with its copies.
func (s *Service) HarvestRecord(ctx context.Context, id int64) (h HarvestRecord, err error) {
	err = s.harvestRead(ctx, func(tx *db.Tx) error {
		h, err = findHarvestRecord(tx, id)
		return err
	})
	return h, err
}

// EarliestDatestamp returns the oldest datestamp a harvest can return; the
// zero time for an empty catalogue.
func (s *Service) EarliestDatestamp(ctx context.Context) (t time.Time, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		t, err = earliestDatestamp(tx)
		return err
	})
	return t, err
}

// RecordKnown reports whether a record with the id is, or was, in the
// catalogue (a deleted record is remembered).
func (s *Service) RecordKnown(ctx context.Context, id int64) (bool, error) {
	var n int
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT (SELECT count(*) FROM records WHERE id = ?1) + (SELECT count(*) FROM deleted_records WHERE record_id = ?1)`, id).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("record %d known: %w", id, err)
	}
	return n > 0, nil
}

// StageImport reads rr into a staged batch (StageImport).
func (s *Service) StageImport(ctx context.Context, rr marc.RecordReader, opt StageOptions) (int64, error) {
	return StageImport(ctx, s.DB, rr, opt)
}

// ImportBatchPage returns batch id and a page of one of its lists (StagedRecords).
func (s *Service) ImportBatchPage(ctx context.Context, id int64, list string, offset, limit int) (b *ImportBatch, recs []StagedRecord, total int, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if b, err = FindImportBatch(tx, id); err != nil {
			return err
		}
		recs, total, err = StagedRecords(tx, id, list, offset, limit)
		return err
	})
	return b, recs, total, err
}

// SetImportActions sets a staged batch's action per rule (SetImportActions).
func (s *Service) SetImportActions(ctx context.Context, actor stacks.Actor, id int64, actions map[string]string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetImportActions(tx, actor, id, actions) })
}

// CommitImport applies a staged batch (CommitImport).
func (s *Service) CommitImport(ctx context.Context, actor stacks.Actor, id int64) (CommitSummary, error) {
	return CommitImport(ctx, s.DB, actor, id)
}

// UndoImport undoes a committed batch (UndoImport).
func (s *Service) UndoImport(ctx context.Context, actor stacks.Actor, id int64) (UndoSummary, error) {
	return UndoImport(ctx, s.DB, actor, id)
}

// RecentImportBatches lists the newest staged imports first.
func (s *Service) RecentImportBatches(ctx context.Context, limit int) (bs []*ImportBatch, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		bs, err = ImportBatches(tx, limit)
		return err
	})
	return bs, err
}
