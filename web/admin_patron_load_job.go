package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/patrons"
)

// A patron load's PINs are hashed with bcrypt on the bounded pool the
// sign-ins share, one slot on a 2-core server: about 15 PINs a second at the
// default cost, fewer while staff sign in. A load with more PINs than one
// request hashes in a few seconds (Config.LoadPINsPerRequest) is checked in the
// request, then hashed and written in the background, under a deadline, while
// a progress page (refreshed by the browser, no script needed) says how far it
// got and, at the end, shows the result as the import page does. One such load
// runs at a time.

// DefaultLoadPINsPerRequest is Config.LoadPINsPerRequest's default: about 3
// seconds of one pool slot at bcrypt's default cost.
const DefaultLoadPINsPerRequest = 50

// patronLoadTimeout bounds a background load: maxUploadPINs PINs take about a
// minute and a half on one slot with the sign-ins of a busy morning between
// them; past the deadline nothing is written, and the page says how to split
// the file.
const patronLoadTimeout = 15 * time.Minute

// patronLoadKeep is how long a finished load's page stays.
const patronLoadKeep = time.Hour

// patronLoadRefresh is how often the progress page asks the browser to reload
// it (the Refresh header: no script, and no meta refresh for assistive
// technology to trip on).
const patronLoadRefresh = 3

// patronLoadJob is a patron load running in the background, or done.
type patronLoadJob struct {
	id      string
	form    AdminPatronLoadForm
	total   int
	hashed  atomic.Int64
	started time.Time
	done    chan struct{}
	// After done: the result and the error, as the import page shows them.
	ended time.Time
	err   error
}

// patronLoadJobs are the background loads of one Server.
type patronLoadJobs struct {
	mu   sync.Mutex
	jobs map[string]*patronLoadJob
	wg   sync.WaitGroup
}

// running returns the load in progress, if any; the caller holds mu.
func (j *patronLoadJobs) running() *patronLoadJob {
	for _, job := range j.jobs {
		select {
		case <-job.done:
		default:
			return job
		}
	}
	return nil
}

// startPatronLoad runs patrons.ApplyLoad in the background for a checked
// load, unless another is running (then it returns that one and false).
func (s *Server) startPatronLoad(f *AdminPatronLoadForm, res *patrons.LoadResult, opt patrons.LoadOptions) (*patronLoadJob, bool) {
	jobs := &s.loadJobs
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if job := jobs.running(); job != nil {
		return job, false
	}
	if jobs.jobs == nil {
		jobs.jobs = map[string]*patronLoadJob{}
	}
	for id, job := range jobs.jobs {
		if !job.ended.IsZero() && time.Since(job.ended) > patronLoadKeep {
			delete(jobs.jobs, id)
		}
	}
	var b [16]byte
	rand.Read(b[:])
	job := &patronLoadJob{id: hex.EncodeToString(b[:]), form: *f, total: res.PINs, started: time.Now(), done: make(chan struct{})}
	job.form.Result = res
	job.form.Categories, job.form.Branches = nil, nil
	jobs.jobs[job.id] = job
	opt.Progress = func(hashed, _ int) { job.hashed.Store(int64(hashed)) }
	bg := s.cfg.Background
	if bg == nil {
		bg = context.Background()
	}
	jobs.wg.Add(1)
	go func() {
		defer jobs.wg.Done()
		ctx, cancel := context.WithTimeout(bg, patronLoadTimeout)
		defer cancel()
		err := s.patrons.load.ApplyLoad(ctx, res, opt)
		switch {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded):
			err = stacks.Errorf(stacks.EINVALID, "The import stopped after %d minutes with %d of %d PINs protected, and nothing was imported. Load the file in parts of a few hundred PINs, or ask an administrator to run stacks patrons import.",
				int(patronLoadTimeout/time.Minute), job.hashed.Load(), job.total)
		case errors.Is(err, context.Canceled):
			err = stacks.Errorf(stacks.EINVALID, "Stacks was stopped during the import, and nothing was imported. Load the file again.")
		case stacks.ErrorCode(err) == stacks.EINTERNAL:
			s.Logger.Error("patron load", "file", f.FileName, "err", err)
		}
		jobs.mu.Lock()
		job.err, job.ended = err, time.Now()
		jobs.mu.Unlock()
		close(job.done)
	}()
	return job, true
}

// Wait waits for the background work requests started (patron loads with many
// PINs) to end: call it after the work's Config.Background context is
// cancelled, before the database closes.
func (s *Server) Wait() { s.loadJobs.wg.Wait() }

// PatronLoadProgress is the progress page of a background patron load.
type PatronLoadProgress struct {
	FileName string
	// Hashed of Total PINs are protected; Writing: all are, and the patrons
	// are being written.
	Hashed, Total int
	Writing       bool
	// Elapsed is how long it has run, in whole seconds.
	Elapsed int
	// Path is the page's own path.
	Path string
}

func (s *Server) handleAdminPatronLoadJob(w http.ResponseWriter, r *http.Request) {
	jobs := &s.loadJobs
	jobs.mu.Lock()
	job := jobs.jobs[chi.URLParam(r, "id")]
	jobs.mu.Unlock()
	if job == nil {
		s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no such patron import: imports are listed here for an hour after they end, and until Stacks restarts. Look for the patrons, or load the file again."))
		return
	}
	select {
	case <-job.done:
		f := job.form
		jobs.mu.Lock()
		err := job.err
		jobs.mu.Unlock()
		if err := s.adminPatronLoadChoices(r, &f); err != nil {
			s.Error(w, r, err)
			return
		}
		if err != nil {
			f.Error = stacks.ErrorMessage(err)
		}
		s.Render(w, r, http.StatusOK, AdminPatronLoadPage(s.page(r, "Import patrons", "admin"), &f))
		return
	default:
	}
	hashed := int(job.hashed.Load())
	// The page again in a few seconds.
	refresh(w, r, patronLoadRefresh, patronLoadJobPath(job))
	s.Render(w, r, http.StatusOK, AdminPatronLoadProgressPage(s.page(r, "Importing patrons", "admin"), PatronLoadProgress{
		FileName: job.form.FileName, Hashed: hashed, Total: job.total, Writing: hashed >= job.total,
		Elapsed: int(time.Since(job.started) / time.Second), Path: patronLoadJobPath(job),
	}))
}

// patronLoadJobPath is the page of a background load.
func patronLoadJobPath(job *patronLoadJob) string { return patronUploadPath + "/" + job.id }
