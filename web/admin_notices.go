package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
)

// adminNoticeRoutes mounts the notices' administration pages under /admin.
func (s *Server) adminNoticeRoutes(r chi.Router) {
	r.Get("/notices", s.handleAdminNotices)
	r.Get("/notices/templates", s.handleAdminNoticeTemplates)
	r.Get("/notices/templates/{id}", s.handleAdminNoticeTemplate)
	r.Post("/notices/templates/{id}", s.handleAdminNoticeTemplateSave)
	r.Post("/notices/templates/{id}/reset", s.handleAdminNoticeTemplateReset)
	r.Post("/notices/templates/{id}/preview", s.handleAdminNoticeTemplatePreview)
	r.Get("/notices/settings", s.handleAdminNoticeSettings)
	r.Post("/notices/settings", s.handleAdminNoticeSettingsSave)
	r.Post("/notices/settings/test", s.handleAdminNoticeTest)
	r.Post("/notices/rules", s.handleAdminNoticeRuleSave)
	r.Post("/notices/resend-failed", s.handleAdminNoticeResendFailed)
	r.Get("/notices/{id}", s.handleAdminNotice)
	r.Post("/notices/{id}/resend", s.handleAdminNoticeResend)
}

// noticesAdminService is what the notices' administration pages need of
// package notices.
type noticesAdminService interface {
	Queue(ctx context.Context, f notices.Filter) (notices.Queue, error)
	Message(ctx context.Context, id int64) (notices.Message, error)
	Resend(ctx context.Context, actor stacks.Actor, id int64) error
	ResendFailed(ctx context.Context, actor stacks.Actor) (int, error)
	Templates(ctx context.Context) ([]notices.Template, error)
	Template(ctx context.Context, key string) (notices.Template, error)
	SaveTemplate(ctx context.Context, actor stacks.Actor, t notices.Template) error
	ResetTemplate(ctx context.Context, actor stacks.Actor, key string) error
	Settings(ctx context.Context) (notices.Settings, error)
	SaveSettings(ctx context.Context, actor stacks.Actor, runAt string, holdDays, cardDays int) error
	SaveRule(ctx context.Context, actor stacks.Actor, r notices.Rule) error
}

// AdminNoticesView is the queue page.
type AdminNoticesView struct {
	Status string
	// Before pages back: messages older than this id; Older is the next page's,
	// 0 on the last page.
	Before, Older int64
	Counts        notices.Counts
	Messages      []notices.Message
	Runs          []notices.Run
	Branches      []library.Branch
	Relay         string
	Prefs         library.Preferences
}

// adminNoticesPage is how many messages the queue page lists at once.
const adminNoticesPage = 200

func (s *Server) handleAdminNotices(w http.ResponseWriter, r *http.Request) {
	v := AdminNoticesView{Status: r.URL.Query().Get("status"), Relay: s.cfg.SMTP.Describe()}
	v.Before, _ = strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	switch v.Status {
	case "", notices.StatusPending, notices.StatusSent, notices.StatusFailed, notices.StatusCancelled:
	default:
		v.Status = ""
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Prefs = prefs
	q, err := s.lib.notices.Queue(r.Context(), notices.Filter{Status: v.Status, Before: v.Before, Limit: adminNoticesPage})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Counts, v.Messages, v.Runs, v.Branches = q.Counts, q.Messages, q.Runs, q.Branches
	if len(v.Messages) == adminNoticesPage {
		v.Older = v.Messages[len(v.Messages)-1].ID
	}
	s.Render(w, r, http.StatusOK, AdminNoticesPage(s.page(r, "Notices", "admin"), &v))
}

// AdminNoticeView is one message.
type AdminNoticeView struct {
	Message notices.Message
	Prefs   library.Preferences
}

func (s *Server) handleAdminNotice(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	m, err := s.lib.notices.Message(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminNoticeView{Message: m, Prefs: prefs}
	s.Render(w, r, http.StatusOK, AdminNoticePage(s.page(r, "Notice "+adminID(id), "admin"), &v))
}

// handleAdminNoticeResend queues a message again, at once.
func (s *Server) handleAdminNoticeResend(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	err := s.lib.notices.Resend(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg := "Notice " + adminID(id) + " is queued again: it goes out within a minute."
	if s.cfg.NoticeSender == nil {
		msg = "Notice " + adminID(id) + " is queued again; no mail relay is configured, so email waits in the queue (printed notices are in the print batch)."
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, safeReturn(r, "/admin/notices"), http.StatusSeeOther)
}

// handleAdminNoticeResendFailed queues every failed message again, at once:
// after the relay or its password is fixed.
func (s *Server) handleAdminNoticeResendFailed(w http.ResponseWriter, r *http.Request) {
	n, err := s.lib.notices.ResendFailed(r.Context(), userFrom(r.Context()).Actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var msg string
	switch {
	case n == 0:
		msg = "No notice had failed: nothing to resend."
	case s.cfg.NoticeSender == nil:
		msg = strconv.Itoa(n) + " failed notices are queued again; no mail relay is configured, so email waits in the queue (printed notices are in the print batch)."
	default:
		msg = strconv.Itoa(n) + " failed notices are queued again: they go out within a few minutes."
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, "/admin/notices?status=pending", http.StatusSeeOther)
}

// AdminNoticeTemplatesView lists the templates.
type AdminNoticeTemplatesView struct {
	Templates []notices.Template
}

func (s *Server) handleAdminNoticeTemplates(w http.ResponseWriter, r *http.Request) {
	ts, err := s.lib.notices.Templates(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminNoticeTemplatesView{Templates: ts}
	s.Render(w, r, http.StatusOK, AdminNoticeTemplatesPage(s.page(r, "Notice templates", "admin"), &v))
}

// AdminNoticeTemplateView is the template editor: the template as typed, and
// its preview with sample data.
type AdminNoticeTemplateView struct {
	Template notices.Template
	Preview  *notices.Rendered
	Errors   FormErrors
}

func (s *Server) handleAdminNoticeTemplate(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "id")
	t, err := s.lib.notices.Template(r.Context(), key)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminNoticeTemplateView{Template: t, Errors: FormErrors{}}
	s.renderNoticeTemplate(w, r, http.StatusOK, &v)
}

func (s *Server) renderNoticeTemplate(w http.ResponseWriter, r *http.Request, status int, v *AdminNoticeTemplateView) {
	if v.Preview == nil && len(v.Errors) == 0 {
		prefs, err := s.preferences(r.Context())
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if out, err := notices.Preview(v.Template, prefs.LibraryName); err == nil {
			v.Preview = &out
		} else {
			v.Errors[cmpOr(stacks.ErrorField(err), "subject")] = stacks.ErrorMessage(err)
		}
	}
	s.Render(w, r, status, AdminNoticeTemplatePage(s.page(r, notices.TemplateLabel(v.Template.Key)+": notice template", "admin"), v))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// handleAdminNoticeTemplateSave previews (action=preview) or saves the template
// as typed; either way a template that does not parse or render is shown again
// with the message beside its field.
func (s *Server) handleAdminNoticeTemplateSave(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "id")
	if _, ok := notices.DefaultTemplate(key); !ok {
		s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no notice template %q.", key))
		return
	}
	t := notices.Template{Key: key,
		Subject: strings.TrimSpace(r.PostFormValue("subject")),
		Text:    strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n"),
		HTML:    strings.ReplaceAll(r.PostFormValue("html"), "\r\n", "\n"),
	}
	v := AdminNoticeTemplateView{Template: t, Errors: FormErrors{}}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	out, err := notices.Preview(t, prefs.LibraryName)
	if err != nil {
		v.Errors[cmpOr(stacks.ErrorField(err), "subject")] = stacks.ErrorMessage(err)
		s.renderNoticeTemplate(w, r, http.StatusUnprocessableEntity, &v)
		return
	}
	v.Preview = &out
	if r.PostFormValue("action") == "preview" {
		s.renderNoticeTemplate(w, r, http.StatusOK, &v)
		return
	}
	err = s.lib.notices.SaveTemplate(r.Context(), userFrom(r.Context()).Actor(), t)
	if f := stacks.ErrorField(err); err != nil && f != "" {
		v.Errors[f] = stacks.ErrorMessage(err)
		s.renderNoticeTemplate(w, r, http.StatusUnprocessableEntity, &v)
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Template "+notices.TemplateLabel(key)+" saved: notices queued from now on use it.")
	redirect(w, r, "/admin/notices/templates/"+key, http.StatusSeeOther)
}

// handleAdminNoticeTemplatePreview answers the template page's live preview: the
// preview of the fields as typed, as a fragment, saving nothing. A template that
// does not work yet is answered 200 with the reason, so that the page shows it in
// place of the preview.
func (s *Server) handleAdminNoticeTemplatePreview(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "id")
	if _, ok := notices.DefaultTemplate(key); !ok {
		s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no notice template %q.", key))
		return
	}
	t := notices.Template{Key: key,
		Subject: strings.TrimSpace(r.PostFormValue("subject")),
		Text:    strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n"),
		HTML:    strings.ReplaceAll(r.PostFormValue("html"), "\r\n", "\n"),
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	out, err := notices.Preview(t, prefs.LibraryName)
	if err != nil {
		s.Render(w, r, http.StatusOK, noticeTemplatePreview(nil, "The template does not work yet: "+stacks.ErrorMessage(err)))
		return
	}
	s.Render(w, r, http.StatusOK, noticeTemplatePreview(&out, ""))
}

func (s *Server) handleAdminNoticeTemplateReset(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "id")
	err := s.lib.notices.ResetTemplate(r.Context(), userFrom(r.Context()).Actor(), key)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Template "+notices.TemplateLabel(key)+" is the built-in one again.")
	redirect(w, r, "/admin/notices/templates/"+key, http.StatusSeeOther)
}

// AdminNoticeSettingsView is the settings page: the relay (set by the server's
// flags), a test message, when the notices run, and the notice rules.
type AdminNoticeSettingsView struct {
	Relay      string
	Configured bool
	TestTo     string
	RunAt      string
	HoldDays   string
	CardDays   string
	Rules      []notices.Rule
	Categories []library.Named
	ItemTypes  []library.Named
	// NewRule is the rule form, as typed.
	NewRule AdminNoticeRuleForm
	Errors  FormErrors
}

// AdminNoticeRuleForm is the notice rule form, as typed.
type AdminNoticeRuleForm struct {
	Category, ItemType                   string
	Predue, Overdue1, Overdue2, Overdue3 string
}

func (s *Server) renderNoticeSettings(w http.ResponseWriter, r *http.Request, status int, change func(*AdminNoticeSettingsView)) {
	set, err := s.lib.notices.Settings(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminNoticeSettingsView{Relay: s.cfg.SMTP.Describe(), Configured: s.cfg.NoticeSender != nil, Errors: FormErrors{},
		NewRule: AdminNoticeRuleForm{Predue: "2", Overdue1: "1", Overdue2: "7", Overdue3: "14"},
		RunAt:   set.RunAt, HoldDays: set.HoldExpiringDays, CardDays: set.CardExpiryDays,
		Rules: set.Rules, Categories: set.Categories, ItemTypes: set.ItemTypes}
	if change != nil {
		change(&v)
	}
	s.Render(w, r, status, AdminNoticeSettingsPage(s.page(r, "Notice settings", "admin"), &v))
}

func (s *Server) handleAdminNoticeSettings(w http.ResponseWriter, r *http.Request) {
	s.renderNoticeSettings(w, r, http.StatusOK, nil)
}

// handleAdminNoticeSettingsSave saves when the notices run and how far ahead
// patrons are warned.
func (s *Server) handleAdminNoticeSettingsSave(w http.ResponseWriter, r *http.Request) {
	runAt, holdDays, cardDays := strings.TrimSpace(r.PostFormValue("run_at")), strings.TrimSpace(r.PostFormValue("hold_days")), strings.TrimSpace(r.PostFormValue("card_days"))
	errs := FormErrors{}
	at, err := notices.ParseRunAt(runAt)
	if err != nil {
		errs["run_at"] = stacks.ErrorMessage(err)
	}
	days := func(field, s string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 60 {
			errs[field] = "Enter a number of days from 0 (never) to 60."
		}
		return n
	}
	hd, cd := days("hold_days", holdDays), days("card_days", cardDays)
	if len(errs) > 0 {
		s.renderNoticeSettings(w, r, http.StatusUnprocessableEntity, func(v *AdminNoticeSettingsView) {
			v.RunAt, v.HoldDays, v.CardDays, v.Errors = runAt, holdDays, cardDays, errs
		})
		return
	}
	err = s.lib.notices.SaveSettings(r.Context(), userFrom(r.Context()).Actor(), at, hd, cd)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Notice settings saved. A --notices-at given to the server wins over the time set here.")
	redirect(w, r, "/admin/notices/settings", http.StatusSeeOther)
}

// handleAdminNoticeTest sends a test message through the relay now.
func (s *Server) handleAdminNoticeTest(w http.ResponseWriter, r *http.Request) {
	to := strings.TrimSpace(r.PostFormValue("to"))
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	err = notices.SendTest(r.Context(), s.cfg.NoticeSender, prefs.LibraryName, to)
	if err != nil && isAdminFormError(err) {
		s.renderNoticeSettings(w, r, http.StatusUnprocessableEntity, func(v *AdminNoticeSettingsView) {
			v.TestTo = to
			v.Errors["to"] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "The relay took the test message to "+to+".")
	redirect(w, r, "/admin/notices/settings", http.StatusSeeOther)
}

// handleAdminNoticeRuleSave adds a notice rule or replaces the one for the same
// category and item type.
func (s *Server) handleAdminNoticeRuleSave(w http.ResponseWriter, r *http.Request) {
	f := AdminNoticeRuleForm{Category: r.PostFormValue("category"), ItemType: r.PostFormValue("item_type"),
		Predue: strings.TrimSpace(r.PostFormValue("predue_days")), Overdue1: strings.TrimSpace(r.PostFormValue("overdue1_days")),
		Overdue2: strings.TrimSpace(r.PostFormValue("overdue2_days")), Overdue3: strings.TrimSpace(r.PostFormValue("overdue3_days"))}
	rule := notices.Rule{}
	errs := FormErrors{}
	num := func(field, s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			errs[field] = "Enter a number of days (0 for none)."
		}
		return n
	}
	id := func(field, s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			errs[field] = "Choose one from the list."
		}
		return n
	}
	rule.PatronCategoryID = id("category", f.Category)
	rule.ItemTypeID = id("item_type", f.ItemType)
	rule.PredueDays = num("predue_days", f.Predue)
	rule.OverdueDays = [3]int{num("overdue1_days", f.Overdue1), num("overdue2_days", f.Overdue2), num("overdue3_days", f.Overdue3)}
	var err error
	if len(errs) == 0 {
		err = s.lib.notices.SaveRule(r.Context(), userFrom(r.Context()).Actor(), rule)
		if fld := stacks.ErrorField(err); err != nil && fld != "" {
			errs[fld] = stacks.ErrorMessage(err)
		} else if err != nil {
			s.Error(w, r, err)
			return
		}
	}
	if len(errs) > 0 {
		s.renderNoticeSettings(w, r, http.StatusUnprocessableEntity, func(v *AdminNoticeSettingsView) {
			v.NewRule, v.Errors = f, errs
		})
		return
	}
	s.Flash(r, "ok", "Notice rule saved.")
	redirect(w, r, "/admin/notices/settings", http.StatusSeeOther)
}

// noticeRuleScope names a rule's category or item type, "Any" for a wildcard.
func noticeRuleScope(id int64, names []library.Named) string {
	for _, n := range names {
		if n.ID == id {
			return n.Name
		}
	}
	return "Any"
}

// noticeDays shows a number of days, "off" for 0.
func noticeDays(n int) string {
	if n == 0 {
		return "off"
	}
	return strconv.Itoa(n)
}
