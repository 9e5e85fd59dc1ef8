package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Workstation settings belong to a desk PC, not to whoever signs in at it: the
// receipt printer and the speakers are on the desk. They live in a cookie of their
// own, so they need no JavaScript and outlast sign-outs and sessions.
const (
	// workstationCookie holds the settings as a query string, such as
	// "sounds=off&paper=receipt&scangap=50". A missing or unknown value means the
	// default.
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
	// ScanGap is the longest average time, in milliseconds, between the keys of
	// a barcode scanner: on a desk page, keys that come faster than this, then
	// Enter, are a scan wherever the focus is (body data-scan-gap, stacks.js);
	// slower keys are a person's, and keep their meaning.
	ScanGap int
}

// The scanner key gap: scanners send a key every few milliseconds, a person
// types one every 100 ms or more; the default is between the two, with room for
// slower wireless scanners.
const (
	defaultScanGap = 50
	minScanGap     = 10
	maxScanGap     = 500
)

// defaultWorkstation is what a browser that never saved its settings gets.
var defaultWorkstation = Workstation{Sounds: true, ScanGap: defaultScanGap}

// The values of the form fields and of the cookie.
const (
	soundsOn     = "on"
	soundsOff    = "off"
	paperPage    = "page"
	paperReceipt = "receipt"
)

// encode returns the cookie value.
func (ws Workstation) encode() string {
	v := url.Values{"sounds": {soundsOff}, "paper": {paperPage}, "scangap": {strconv.Itoa(ws.ScanGap)}}
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
	if gap, ok := parseScanGap(v.Get("scangap")); ok && gap != 0 {
		ws.ScanGap = gap
	}
	return ws, true
}

// parseScanGap reads the scanner key gap as typed on the form or kept in the
// cookie: a whole number of milliseconds from minScanGap to maxScanGap, or empty
// (0, for the default).
func parseScanGap(s string) (int, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "ms"))
	if s == "" {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < minScanGap || n > maxScanGap {
		return 0, false
	}
	return n, true
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
	// ScanGap is the scanner key gap as typed (milliseconds).
	ScanGap string
	// Errors are keyed "sounds", "paper" or "scangap".
	Errors FormErrors
}

func (s *Server) handleWorkstation(w http.ResponseWriter, r *http.Request) {
	p := s.page(r, "Workstation", "")
	v := &WorkstationView{Sounds: soundsOff, Paper: paperPage, ScanGap: strconv.Itoa(p.ScanGap), Errors: FormErrors{}}
	if p.Sounds {
		v.Sounds = soundsOn
	}
	if p.ReceiptPaper {
		v.Paper = paperReceipt
	}
	s.Render(w, r, http.StatusOK, WorkstationPage(p, v))
}

// handleWorkstationSave stores the settings in this browser's cookie.
func (s *Server) handleWorkstationSave(w http.ResponseWriter, r *http.Request) {
	v := &WorkstationView{Sounds: r.PostFormValue("sounds"), Paper: r.PostFormValue("paper"),
		ScanGap: r.PostFormValue("scangap"), Errors: FormErrors{}}
	ws := Workstation{ScanGap: defaultScanGap}
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
	// Empty is the default, so that the field can be cleared to go back to it.
	if gap, ok := parseScanGap(v.ScanGap); !ok {
		v.Errors["scangap"] = fmt.Sprintf("Enter the scanner key gap as a whole number of milliseconds from %d to %d, "+
			"or leave it empty for the default (%d).", minScanGap, maxScanGap, defaultScanGap)
	} else if gap != 0 {
		ws.ScanGap = gap
	}
	if len(v.Errors) > 0 {
		s.Render(w, r, http.StatusUnprocessableEntity, WorkstationPage(s.page(r, "Workstation", ""), v))
		return
	}
	s.setWorkstation(w, r, ws)
	s.Flash(r, "ok", "Workstation settings saved")
	redirect(w, r, "/workstation", http.StatusSeeOther)
}

// onOff is "on" or "off", for data-sounds.
func onOff(b bool) string {
	if b {
		return soundsOn
	}
	return soundsOff
}
