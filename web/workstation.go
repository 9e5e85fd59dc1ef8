package web

import (
	"net/http"
	"net/url"
	"time"
)

// Workstation settings belong to a desk PC, not to whoever signs in at it: the
// receipt printer and the speakers are on the desk. They live in a cookie of their
// own, so they need no JavaScript and outlast sign-outs and sessions.
const (
	// workstationCookie holds the settings as a query string, such as
	// "sounds=off&paper=receipt". A missing or unknown value means the default.
	workstationCookie = "stacks_workstation"
	// workstationMaxAge is the longest that browsers keep a cookie (Chrome caps
	// it at 400 days); each sign-in renews it, so a desk in use keeps its
	// settings.
	workstationMaxAge = 400 * 24 * time.Hour
)

// Workstation are the settings of one desk PC.
type Workstation struct {
	// Sounds lets the desk play sounds (hold found, transfer, errors).
	Sounds bool
	// ReceiptPaper prints slips for an 80 mm receipt printer rather than an A4 or
	// Letter page.
	ReceiptPaper bool
}

// defaultWorkstation is what a browser that never saved its settings gets.
var defaultWorkstation = Workstation{Sounds: true}

// The values of the form fields and of the cookie.
const (
	soundsOn     = "on"
	soundsOff    = "off"
	paperPage    = "page"
	paperReceipt = "receipt"
)

// encode returns the cookie value.
func (ws Workstation) encode() string {
	v := url.Values{"sounds": {soundsOff}, "paper": {paperPage}}
	if ws.Sounds {
		v.Set("sounds", soundsOn)
	}
	if ws.ReceiptPaper {
		v.Set("paper", paperReceipt)
	}
	return v.Encode()
}

// workstationFrom reads the request's settings; each missing or invalid one is
// the default, so a damaged cookie never stops a page.
func workstationFrom(r *http.Request) (ws Workstation, saved bool) {
	ws = defaultWorkstation
	c, err := r.Cookie(workstationCookie)
	if err != nil {
		return ws, false
	}
	v, _ := url.ParseQuery(c.Value)
	switch v.Get("sounds") {
	case soundsOn:
		ws.Sounds = true
	case soundsOff:
		ws.Sounds = false
	}
	switch v.Get("paper") {
	case paperPage:
		ws.ReceiptPaper = false
	case paperReceipt:
		ws.ReceiptPaper = true
	}
	return ws, true
}

// setWorkstation stores ws in the browser for workstationMaxAge.
func (s *Server) setWorkstation(w http.ResponseWriter, r *http.Request, ws Workstation) {
	http.SetCookie(w, &http.Cookie{
		Name:     workstationCookie,
		Value:    ws.encode(),
		Path:     cookiePath(r),
		MaxAge:   int(workstationMaxAge / time.Second),
		HttpOnly: true,
		Secure:   s.cfg.SecureCookies || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// renewWorkstation sets the saved settings again, with a new lifetime, so that
// they do not expire on a desk PC in daily use. It is called at sign-in.
func (s *Server) renewWorkstation(w http.ResponseWriter, r *http.Request) {
	if ws, saved := workstationFrom(r); saved {
		s.setWorkstation(w, r, ws)
	}
}

// WorkstationView is the workstation settings form.
type WorkstationView struct {
	// Sounds and Paper are the chosen values (soundsOn, paperReceipt, ...).
	Sounds, Paper string
	// Errors are keyed "sounds" or "paper".
	Errors FormErrors
}

func (s *Server) handleWorkstation(w http.ResponseWriter, r *http.Request) {
	p := s.page(r, "Workstation", "")
	v := &WorkstationView{Sounds: soundsOff, Paper: paperPage, Errors: FormErrors{}}
	if p.Sounds {
		v.Sounds = soundsOn
	}
	if p.ReceiptPaper {
		v.Paper = paperReceipt
	}
	s.render(w, r, http.StatusOK, WorkstationPage(p, v))
}

// handleWorkstationSave stores the settings in this browser's cookie.
func (s *Server) handleWorkstationSave(w http.ResponseWriter, r *http.Request) {
	v := &WorkstationView{Sounds: r.PostFormValue("sounds"), Paper: r.PostFormValue("paper"), Errors: FormErrors{}}
	var ws Workstation
	switch v.Sounds {
	case soundsOn:
		ws.Sounds = true
	case soundsOff:
	default:
		v.Errors["sounds"] = "Choose On or Off for sounds."
	}
	switch v.Paper {
	case paperReceipt:
		ws.ReceiptPaper = true
	case paperPage:
	default:
		v.Errors["paper"] = "Choose the paper this desk prints slips on: an A4 or Letter page, or an 80 mm receipt printer."
	}
	if len(v.Errors) > 0 {
		s.render(w, r, http.StatusUnprocessableEntity, WorkstationPage(s.page(r, "Workstation", ""), v))
		return
	}
	s.setWorkstation(w, r, ws)
	s.flash(r, "ok", "Workstation settings saved")
	redirect(w, r, "/workstation", http.StatusSeeOther)
}

// onOff is "on" or "off", for data-sounds.
func onOff(b bool) string {
	if b {
		return soundsOn
	}
	return soundsOff
}
