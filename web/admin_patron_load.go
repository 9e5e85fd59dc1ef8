package web

import (
	"errors"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// maxPatronUpload bounds a patron file in bytes; patrons.WebLoadRows bounds its
// rows.
const maxPatronUpload = 20 << 20

// maxUploadPINs bounds the PINs one upload sets: at about 65 ms of bcrypt each
// on one slot of the pool, 1,000 take over a minute, hashed in the background
// within patronLoadTimeout. The command line has no limit.
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
	// RunningLoad is the page of the load in progress that kept this one from
	// starting.
	RunningLoad string
}

func (s *Server) adminPatronLoadChoices(r *http.Request, f *AdminPatronLoadForm) error {
	c, err := s.patrons.load.Choices(r.Context())
	f.Categories, f.Branches = c.Categories, c.Branches
	return err
}

func (s *Server) handleAdminPatronLoadForm(w http.ResponseWriter, r *http.Request) {
	f := &AdminPatronLoadForm{Match: patrons.MatchCard}
	if err := s.adminPatronLoadChoices(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, AdminPatronLoadPage(s.page(r, "Import patrons", "admin"), f))
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
		s.Render(w, r, status, AdminPatronLoadPage(s.page(r, "Import patrons", "admin"), f))
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
	opt := patrons.LoadOptions{
		Actor: userFrom(r.Context()).Actor(), Match: f.Match, DryRun: f.DryRun, SkipBad: f.SkipBad, ClearEmpty: f.ClearEmpty,
		DefaultCategory: f.DefaultCategory, DefaultBranch: f.DefaultBranch, DefaultExpiry: f.DefaultExpiry,
		MaxPINs: maxUploadPINs, OverwritePINs: f.OverwritePINs,
		// The desks wait behind the load's write transaction: about 1
		// second at 20,000 rows (docs/patrons.md).
		MaxRows: patrons.WebLoadRows,
	}
	fail := func(err error) {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Logger.Error("patron load", "file", f.FileName, "err", err)
		}
		f.Error = stacks.ErrorMessage(err)
		render(kit.CodeStatus(stacks.ErrorCode(err)))
	}
	res, err := s.patrons.load.CheckLoad(r.Context(), file, opt)
	if res != nil && len(res.Rows) > 0 {
		f.Result = res
	}
	if err != nil {
		fail(err)
		return
	}
	if f.DryRun {
		render(http.StatusOK)
		return
	}
	// A request hashes a few PINs itself; more are hashed in the background,
	// with a progress page (admin_patron_load_job.go).
	if res.PINs > s.loadPINsPerRequest() {
		if s.cfg.NoBackground {
			fail(stacks.Errorf(stacks.EINVALID, "The file sets %d PINs; here at most %d are set in one import. Nothing was imported. Split the file into parts of at most %d PINs and load them one after the other, or ask an administrator to run stacks patrons import.",
				res.PINs, s.loadPINsPerRequest(), s.loadPINsPerRequest()))
			return
		}
		job, ok := s.startPatronLoad(f, res, opt)
		if !ok {
			f.Result = nil
			f.RunningLoad = patronLoadJobPath(job)
			fail(stacks.Errorf(stacks.ECONFLICT, "Another patron import (%s) is protecting its PINs. Nothing was imported from this file; load it again when that import has finished.", job.form.FileName))
			return
		}
		redirect(w, r, patronLoadJobPath(job), http.StatusSeeOther)
		return
	}
	if err := s.patrons.load.ApplyLoad(r.Context(), res, opt); err != nil {
		fail(err)
		return
	}
	render(http.StatusOK)
}

// loadPINsPerRequest is how many PINs a patron load hashes in its own request.
func (s *Server) loadPINsPerRequest() int {
	if s.cfg.LoadPINsPerRequest > 0 {
		return s.cfg.LoadPINsPerRequest
	}
	return DefaultLoadPINsPerRequest
}
