package web

import (
	"errors"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// maxPatronUpload bounds a patron file in bytes; patrons.WebLoadRows bounds its
// rows.
const maxPatronUpload = 20 << 20

// maxUploadPINs bounds the PINs one upload sets: at about 0.3 s of bcrypt each
// on half the CPUs, 1,000 take some five minutes, well inside the upload's
// deadlines. The command line has no limit.
const maxUploadPINs = 1000

// patronUploadPath is the patron load's upload, exempt from maxFormBody like the
// MARC upload.
const patronUploadPath = "/admin/patrons/import"

// AdminPatronLoadForm is the patron load page: the form and, after a post, what
// the load did or would do.
type AdminPatronLoadForm struct {
	Categories      []patrons.Category
	Branches        []library.Branch
	Match           string
	SkipBad         bool
	ClearEmpty      bool
	OverwritePINs   bool
	DefaultCategory string
	DefaultBranch   string
	DefaultExpiry   string
	DryRun          bool
	Error           string
	FileName        string
	Result          *patrons.LoadResult
}

func (s *Server) adminPatronLoadChoices(r *http.Request, f *AdminPatronLoadForm) error {
	return s.DB.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		if f.Categories, err = patrons.ListCategories(tx); err != nil {
			return err
		}
		f.Branches, err = library.ListBranches(tx)
		return err
	})
}

func (s *Server) handleAdminPatronLoadForm(w http.ResponseWriter, r *http.Request) {
	f := &AdminPatronLoadForm{Match: patrons.MatchCard}
	if err := s.adminPatronLoadChoices(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, AdminPatronLoadPage(s.page(r, "Import patrons", "admin"), f))
}

func (s *Server) handleAdminPatronLoad(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPatronUpload)
	f := &AdminPatronLoadForm{
		Match: r.FormValue("match"), SkipBad: r.FormValue("skip_bad") != "", ClearEmpty: r.FormValue("clear_empty") != "",
		OverwritePINs:   r.FormValue("overwrite_pins") != "",
		DefaultCategory: r.FormValue("default_category"), DefaultBranch: r.FormValue("default_branch"),
		DefaultExpiry: r.FormValue("default_expiry"), DryRun: r.FormValue("action") != "import",
	}
	if err := s.adminPatronLoadChoices(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	render := func(status int) {
		s.render(w, r, status, AdminPatronLoadPage(s.page(r, "Import patrons", "admin"), f))
	}
	file, header, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			f.Error = "The file is larger than 20 MB. Split it and import the parts one after the other."
			render(http.StatusRequestEntityTooLarge)
			return
		}
		f.Error = "Choose a CSV file of patrons."
		render(http.StatusUnprocessableEntity)
		return
	}
	defer file.Close()
	f.FileName = header.Filename
	res, err := patrons.Load(r.Context(), s.DB, file, patrons.LoadOptions{
		Actor: userFrom(r.Context()).Actor(), Match: f.Match, DryRun: f.DryRun, SkipBad: f.SkipBad, ClearEmpty: f.ClearEmpty,
		DefaultCategory: f.DefaultCategory, DefaultBranch: f.DefaultBranch, DefaultExpiry: f.DefaultExpiry,
		MaxPINs: maxUploadPINs, OverwritePINs: f.OverwritePINs,
		// The desks wait behind the load's write transaction: about 1
		// second at 20,000 rows (docs/patrons.md).
		MaxRows: patrons.WebLoadRows,
	})
	if res != nil && len(res.Rows) > 0 {
		f.Result = res
	}
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Logger.Error("patron load", "file", f.FileName, "err", err)
		}
		f.Error = stacks.ErrorMessage(err)
		render(errorStatus(stacks.ErrorCode(err)))
		return
	}
	render(http.StatusOK)
}
