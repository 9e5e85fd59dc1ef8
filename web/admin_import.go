package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
)

// maxMARCUpload bounds a MARC upload; other forms have a much smaller limit.
const maxMARCUpload = 100 << 20

// importService is what the MARC import page needs of the catalogue.
type importService interface {
	ImportChoices(ctx context.Context) ([]library.Branch, []library.Named, error)
	Import(ctx context.Context, rr marc.RecordReader, opt catalog.ImportOptions) (catalog.ImportSummary, error)
	StageImport(ctx context.Context, rr marc.RecordReader, opt catalog.StageOptions) (int64, error)
	ImportBatchPage(ctx context.Context, id int64, list string, offset, limit int) (*catalog.ImportBatch, []catalog.StagedRecord, int, error)
	SetImportActions(ctx context.Context, actor stacks.Actor, id int64, actions map[string]string) error
	CommitImport(ctx context.Context, actor stacks.Actor, id int64) (catalog.CommitSummary, error)
	UndoImport(ctx context.Context, actor stacks.Actor, id int64) (catalog.UndoSummary, error)
	RecentImportBatches(ctx context.Context, limit int) ([]*catalog.ImportBatch, error)
}

func (s *Server) adminImportForm(r *http.Request, f *AdminImportForm) (err error) {
	if f.Branches, f.ItemTypes, err = s.Catalog.ImportChoices(r.Context()); err != nil {
		return err
	}
	f.Batches, err = s.Catalog.RecentImportBatches(r.Context(), 20)
	return err
}

func (s *Server) handleAdminImportForm(w http.ResponseWriter, r *http.Request) {
	f := &AdminImportForm{Branch: userFrom(r.Context()).BranchCode, ItemType: "BOOK", GenerateItems: true}
	if err := s.adminImportForm(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, AdminImportPage(s.page(r, "Import MARC records", "admin"), f))
}

func (s *Server) handleAdminImport(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxMARCUpload)
	f := &AdminImportForm{Branch: r.FormValue("branch"), ItemType: r.FormValue("item_type"), GenerateItems: r.FormValue("generate") != ""}
	if err := s.adminImportForm(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	fail := func(status int, msg string) {
		f.Error = msg
		s.Render(w, r, status, AdminImportPage(s.page(r, "Import MARC records", "admin"), f))
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(http.StatusRequestEntityTooLarge, "The file is larger than 100 MB. Split it and import the parts one after the other.")
			return
		}
		fail(http.StatusUnprocessableEntity, "Choose a MARC file to import.")
		return
	}
	defer file.Close()
	f.FileName = header.Filename
	rr, err := marc.NewAutoReader(bufio.NewReaderSize(file, 1<<16))
	if err != nil {
		fail(http.StatusUnprocessableEntity, "That file is not MARC 21 (ISO 2709 or MARCXML): "+err.Error())
		return
	}
	if _, isXML := rr.(*marc.XMLReader); isXML {
		// XML that breaks off (cut short, a bare "&", an entity from a DTD, a text
		// over 8 MB) would stop the import after its first batches: read it all
		// first, and import nothing from a file that cannot be read to its end.
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			s.Error(w, r, fmt.Errorf("rewind the upload: %w", err))
			return
		}
		if err := catalog.CheckXML(bufio.NewReaderSize(file, 1<<16)); err != nil {
			if stacks.ErrorCode(err) == stacks.EINTERNAL {
				s.Error(w, r, err)
				return
			}
			fail(http.StatusUnprocessableEntity, "Nothing was imported. "+stacks.ErrorMessage(err))
			return
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			s.Error(w, r, fmt.Errorf("rewind the upload: %w", err))
			return
		}
		if rr, err = marc.NewAutoReader(bufio.NewReaderSize(file, 1<<16)); err != nil {
			s.Error(w, r, fmt.Errorf("reopen the upload: %w", err))
			return
		}
	}
	if r.FormValue("stage") != "" {
		id, err := s.Catalog.StageImport(r.Context(), rr, catalog.StageOptions{Actor: userFrom(r.Context()).Actor(), FileName: f.FileName,
			Branch: f.Branch, ItemType: f.ItemType, GenerateItems: f.GenerateItems})
		if err != nil {
			if stacks.ErrorCode(err) == stacks.EINTERNAL {
				s.Error(w, r, err)
				return
			}
			fail(kit.CodeStatus(stacks.ErrorCode(err)), "Nothing was staged: "+stacks.ErrorMessage(err))
			return
		}
		s.Flash(r, "ok", fmt.Sprintf("%s is staged as batch %d: review it, then commit it.", f.FileName, id))
		redirect(w, r, fmt.Sprintf("/admin/import/batches/%d", id), http.StatusSeeOther)
		return
	}
	sum, err := s.Catalog.Import(r.Context(), rr, catalog.ImportOptions{
		Actor: userFrom(r.Context()).Actor(), Branch: f.Branch, ItemType: f.ItemType, GenerateItems: f.GenerateItems})
	f.Summary = &sum
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Logger.Error("import", "file", f.FileName, "err", err)
		}
		fail(kit.CodeStatus(stacks.ErrorCode(err)), "The import stopped: "+stacks.ErrorMessage(err)+" What is listed above was imported.")
		return
	}
	s.Render(w, r, http.StatusOK, AdminImportPage(s.page(r, "Import MARC records", "admin"), f))
}
