package notices

import (
	"database/sql"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"sync"
	texttemplate "text/template"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Template keys: one per kind of notice, the overdue levels apart, and the digest
// that wraps the sections of a message with several kinds.
const (
	TemplateOverdue1 = "overdue1"
	TemplateOverdue2 = "overdue2"
	TemplateOverdue3 = "overdue3"
	TemplateDigest   = "digest"
)

// TemplateKeys are the templates in the order a digest lists its sections (the
// most pressing first), the digest last.
var TemplateKeys = []string{
	TemplateOverdue3, TemplateOverdue2, TemplateOverdue1, TriggerLostBill,
	TriggerHoldAvailable, TriggerHoldExpiring, TriggerPredue, TriggerCardExpiry,
	TemplateDigest,
}

// TemplateLabel names a template for people.
func TemplateLabel(key string) string {
	switch key {
	case TemplateOverdue1:
		return "Overdue, first notice"
	case TemplateOverdue2:
		return "Overdue, second notice"
	case TemplateOverdue3:
		return "Overdue, final notice"
	case TemplateDigest:
		return "Digest (several kinds in one message)"
	}
	return KindLabel(key)
}

func templateKey(it Item) string {
	if it.Trigger == TriggerOverdue {
		return fmt.Sprintf("overdue%d", min(max(it.Level, 1), 3))
	}
	return it.Trigger
}

// Template is one kind's subject (one line of text/template), plain-text body
// (text/template) and HTML body (html/template).
type Template struct {
	Key     string
	Subject string
	Text    string
	HTML    string
	// Custom: an administrator changed it (else it is the built-in one).
	Custom    bool
	UpdatedAt time.Time
}

// The data every template sees. Values come from patrons' and catalogue data and
// are never parsed as templates; html/template escapes them in HTML bodies.
type (
	// TemplateData is what a kind's template sees.
	TemplateData struct {
		Library LibraryData
		Patron  PatronData
		// Day is the library day of the notice, e.g. "Tuesday 1 December 2026".
		Day   string
		Items []ItemData
		// Count is len(Items).
		Count int
	}
	// LibraryData describes the library.
	LibraryData struct{ Name string }
	// PatronData describes the patron the notice is for.
	PatronData struct {
		Name, FirstName, Surname, Card, Email string
	}
	// ItemData is one item of a notice.
	ItemData struct {
		Title, Author, Barcode string
		// When is the day that matters, e.g. "Monday 21 December 2026 at 20:00":
		// due (due soon, overdue), pickup deadline (holds), expiry (card).
		When string
		// Branch is where: the pickup branch of a hold, the branch of a loan.
		Branch string
		// Amount is a bill's amount, e.g. "12.50"; "" when none.
		Amount string
	}
	// DigestData is what the digest template sees: a message's sections.
	DigestData struct {
		Library  LibraryData
		Patron   PatronData
		Day      string
		Sections []Section
	}
	// Section is one kind's part of a digest, already rendered.
	Section struct {
		Subject string
		Text    string
		HTML    htmltemplate.HTML
	}
)

// Default templates.
var defaults = map[string]Template{
	TriggerHoldAvailable: {
		Subject: `{{if eq .Count 1}}Your hold is ready to collect{{else}}{{.Count}} holds are ready to collect{{end}}`,
		Text: `These items are waiting for you:
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}}
    at {{.Branch}}, until {{.When}}
{{end}}`,
		HTML: `<p>These items are waiting for you:</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}}<br>at {{.Branch}}, until {{.When}}</li>{{end}}
</ul>`,
	},
	TriggerHoldExpiring: {
		Subject: `Collect your hold soon`,
		Text: `Your hold will go back to the shelves if it is not collected in time:
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}}
    at {{.Branch}}, until {{.When}}
{{end}}`,
		HTML: `<p>Your hold will go back to the shelves if it is not collected in time:</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}}<br>at {{.Branch}}, until {{.When}}</li>{{end}}
</ul>`,
	},
	TriggerPredue: {
		Subject: `{{if eq .Count 1}}An item is due soon{{else}}{{.Count}} items are due soon{{end}}`,
		Text: `A reminder: these items are due soon. You can renew them at any branch.
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})
    due {{.When}}
{{end}}`,
		HTML: `<p>A reminder: these items are due soon. You can renew them at any branch.</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})<br>due {{.When}}</li>{{end}}
</ul>`,
	},
	TemplateOverdue1: {
		Subject: `{{if eq .Count 1}}An item is overdue{{else}}{{.Count}} items are overdue{{end}}`,
		Text: `These items were due back and are now overdue. Please return or renew them.
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})
    was due {{.When}}
{{end}}`,
		HTML: `<p>These items were due back and are now overdue. Please return or renew them.</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})<br>was due {{.When}}</li>{{end}}
</ul>`,
	},
	TemplateOverdue2: {
		Subject: `Second notice: {{if eq .Count 1}}an item is{{else}}{{.Count}} items are{{end}} overdue`,
		Text: `Second notice. These items are still overdue; please return them as soon as you can.
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})
    was due {{.When}}
{{end}}`,
		HTML: `<p>Second notice. These items are still overdue; please return them as soon as you can.</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})<br>was due {{.When}}</li>{{end}}
</ul>`,
	},
	TemplateOverdue3: {
		Subject: `Final notice: {{if eq .Count 1}}an item is{{else}}{{.Count}} items are{{end}} overdue`,
		Text: `Final notice. These items are long overdue. If they are not returned, you will be billed for them.
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})
    was due {{.When}}
{{end}}`,
		HTML: `<p>Final notice. These items are long overdue. If they are not returned, you will be billed for them.</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}})<br>was due {{.When}}</li>{{end}}
</ul>`,
	},
	TriggerCardExpiry: {
		Subject: `Your library card expires soon`,
		Text: `Your library card {{.Patron.Card}} expires on {{range .Items}}{{.When}}{{end}}. Renew it at any branch.
`,
		HTML: `<p>Your library card {{.Patron.Card}} expires on {{range .Items}}{{.When}}{{end}}. Renew it at any branch.</p>`,
	},
	TriggerLostBill: {
		Subject: `A bill for a lost item`,
		Text: `These items are counted as lost and you have been billed for them:
{{range .Items}}
  - {{.Title}}{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}}): {{.Amount}}
{{end}}
If you find an item, bring it back: the bill will be reviewed.
`,
		HTML: `<p>These items are counted as lost and you have been billed for them:</p>
<ul>{{range .Items}}
<li><strong>{{.Title}}</strong>{{if .Author}} / {{.Author}}{{end}} ({{.Barcode}}): {{.Amount}}</li>{{end}}
</ul>
<p>If you find an item, bring it back: the bill will be reviewed.</p>`,
	},
	TemplateDigest: {
		Subject: `Notices from {{.Library.Name}}`,
		Text: `Dear {{.Patron.Name}},
{{range .Sections}}
{{.Text}}{{end}}
{{.Library.Name}}
`,
		HTML: `<p>Dear {{.Patron.Name}},</p>
{{range .Sections}}{{.HTML}}
{{end}}<p>{{.Library.Name}}</p>`,
	},
}

// DefaultTemplate returns the built-in template of key.
func DefaultTemplate(key string) (Template, bool) {
	t, ok := defaults[key]
	t.Key = key
	return t, ok
}

// listTemplates returns every template, the administrators' versions where they
// changed one, in TemplateKeys order. One query.
func listTemplates(tx *db.Tx) ([]Template, error) {
	stored, err := storedTemplates(tx)
	if err != nil {
		return nil, err
	}
	out := make([]Template, 0, len(TemplateKeys))
	for _, k := range TemplateKeys {
		if t, ok := stored[k]; ok {
			out = append(out, t)
		} else {
			t, _ := DefaultTemplate(k)
			out = append(out, t)
		}
	}
	return out, nil
}

// findTemplate returns the template of key.
func findTemplate(tx *db.Tx, key string) (Template, error) {
	def, ok := DefaultTemplate(key)
	if !ok {
		return Template{}, stacks.Errorf(stacks.ENOTFOUND, "There is no notice template %q.", key)
	}
	var t Template
	var updated string
	err := tx.QueryRow(`SELECT subject, body_text, body_html, updated_at FROM notice_templates WHERE kind = ?`, key).
		Scan(&t.Subject, &t.Text, &t.HTML, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return def, nil
	} else if err != nil {
		return Template{}, fmt.Errorf("find notice template %s: %w", key, err)
	}
	t.Key, t.Custom = key, true
	t.UpdatedAt, _ = db.ParseTime(updated)
	return t, nil
}

func storedTemplates(tx *db.Tx) (map[string]Template, error) {
	rows, err := tx.Query(`SELECT kind, subject, body_text, body_html, updated_at FROM notice_templates`)
	if err != nil {
		return nil, fmt.Errorf("read notice templates: %w", err)
	}
	defer rows.Close()
	m := map[string]Template{}
	for rows.Next() {
		var t Template
		var updated string
		if err := rows.Scan(&t.Key, &t.Subject, &t.Text, &t.HTML, &updated); err != nil {
			return nil, err
		}
		t.Custom = true
		t.UpdatedAt, _ = db.ParseTime(updated)
		m[t.Key] = t
	}
	return m, rows.Err()
}

// saveTemplate stores an administrator's version of a template as it is
// (Service.SaveTemplate checks it first).
func saveTemplate(tx *db.Tx, actor stacks.Actor, t Template) error {
	var staff sql.NullInt64
	if actor.StaffID != 0 {
		staff = sql.NullInt64{Int64: actor.StaffID, Valid: true}
	}
	_, err := tx.Exec(`INSERT INTO notice_templates (kind, subject, body_text, body_html, updated_at, staff_id)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind) DO UPDATE SET subject = excluded.subject, body_text = excluded.body_text,
			body_html = excluded.body_html, updated_at = excluded.updated_at, staff_id = excluded.staff_id`,
		t.Key, t.Subject, t.Text, t.HTML, db.FormatTime(tx.Now()), staff)
	if err != nil {
		return fmt.Errorf("save notice template %s: %w", t.Key, err)
	}
	return tx.Audit(actor, "notices.template.save", "notice_template", 0, t.Key)
}

// resetTemplate goes back to the built-in template of key.
func resetTemplate(tx *db.Tx, actor stacks.Actor, key string) error {
	if _, ok := DefaultTemplate(key); !ok {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no notice template %q.", key)
	}
	if _, err := tx.Exec(`DELETE FROM notice_templates WHERE kind = ?`, key); err != nil {
		return fmt.Errorf("reset notice template %s: %w", key, err)
	}
	return tx.Audit(actor, "notices.template.reset", "notice_template", 0, key)
}

// parsed is one template, parsed, with its loops and calls guarded (see
// budget). One message at a time executes it: b is that message's budget.
type parsed struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template

	mu sync.Mutex
	b  *budget
}

// parseTemplate parses t's three parts; an error names the part for the form.
func parseTemplate(t Template) (*parsed, error) {
	p := &parsed{}
	funcs := boundedFuncs(p)
	var err error
	if strings.ContainsAny(t.Subject, "\r\n") {
		return nil, stacks.FieldErrorf("subject", stacks.EINVALID, "The subject must be one line.")
	}
	if p.subject, err = texttemplate.New("subject").Funcs(funcs).Parse(t.Subject); err != nil {
		return nil, stacks.FieldErrorf("subject", stacks.EINVALID, "The subject does not parse: %s", templateError(err))
	}
	if p.text, err = texttemplate.New("text").Funcs(funcs).Parse(t.Text); err != nil {
		return nil, stacks.FieldErrorf("text", stacks.EINVALID, "The plain-text body does not parse: %s", templateError(err))
	}
	if p.html, err = htmltemplate.New("html").Funcs(funcs).Parse(t.HTML); err != nil {
		return nil, stacks.FieldErrorf("html", stacks.EINVALID, "The HTML body does not parse: %s", templateError(err))
	}
	guardTemplate(textTrees(p.subject))
	guardTemplate(textTrees(p.text))
	guardTemplate(htmlTrees(p.html))
	return p, nil
}

// templateError shortens a template package's error for a form.
func templateError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "template: ")
	s = strings.TrimPrefix(s, "html/template:")
	return s
}

// Rendered is a rendered message.
type Rendered struct {
	Subject string
	Text    string
	HTML    string
}

// renderer renders messages from a library's templates.
type renderer struct {
	library string
	loc     *time.Location
	tmpl    map[string]*parsed
	// strict reports a template's error rather than fall back on the built-in.
	strict bool
	// b is the budget of the message being rendered.
	b *budget
}

func newRenderer(tx *db.Tx, library string, loc *time.Location) (*renderer, error) {
	stored, err := storedTemplates(tx)
	if err != nil {
		return nil, err
	}
	r := &renderer{library: library, loc: loc, tmpl: map[string]*parsed{}}
	for _, k := range TemplateKeys {
		t, ok := stored[k]
		if !ok {
			t, _ = DefaultTemplate(k)
		}
		p, err := parseTemplate(t)
		if err != nil {
			// A stored template is checked when saved; should one still fail,
			// the built-in one says what the patron must know.
			def, _ := DefaultTemplate(k)
			if p, err = parseTemplate(def); err != nil {
				return nil, fmt.Errorf("built-in notice template %s: %w", k, err)
			}
		}
		r.tmpl[k] = p
	}
	return r, nil
}

// patronInfo is what a message needs about its patron.
type patronInfo struct {
	ID                       int64
	Card, FirstName, Surname string
	Email                    string
	HomeBranchID             int64
	CategoryID               int64
	ExpiresOn                string
}

func (p patronInfo) data() PatronData {
	name := strings.TrimSpace(p.FirstName + " " + p.Surname)
	return PatronData{Name: name, FirstName: p.FirstName, Surname: p.Surname, Card: p.Card, Email: p.Email}
}

// render renders one message of items (all for one patron) on library day day.
func (r *renderer) render(p PatronData, day time.Time, items []Item) (Rendered, error) {
	r.b = newBudget()
	groups := map[string][]ItemData{}
	for _, it := range items {
		k := templateKey(it)
		groups[k] = append(groups[k], r.itemData(it))
	}
	dayText := day.Format("Monday 2 January 2006")
	var sections []Section
	for _, k := range TemplateKeys {
		g, ok := groups[k]
		if !ok {
			continue
		}
		data := TemplateData{Library: LibraryData{Name: r.library}, Patron: p, Day: dayText, Items: g, Count: len(g)}
		s, err := r.section(k, data)
		if err != nil {
			return Rendered{}, err
		}
		sections = append(sections, s)
	}
	if len(sections) == 0 {
		return Rendered{}, fmt.Errorf("render notice: no items")
	}
	return r.digest(DigestData{Library: LibraryData{Name: r.library}, Patron: p, Day: dayText, Sections: sections})
}

func (r *renderer) itemData(it Item) ItemData {
	d := ItemData{Title: it.Title, Author: it.Author, Barcode: it.Barcode, Branch: it.BranchName}
	if !it.At.IsZero() {
		at := it.At.In(r.loc)
		switch it.Trigger {
		case TriggerCardExpiry:
			d.When = at.Format("Monday 2 January 2006")
		default:
			d.When = at.Format("Monday 2 January 2006 at 15:04")
		}
	}
	if it.AmountCents != 0 {
		d.Amount = stacks.FormatMoney(it.AmountCents)
	}
	return d
}

// execute runs one template's three parts on data within the budget b; an
// error names the part.
func (p *parsed) execute(what string, data any, b *budget) (subject, text, html string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.b = b
	sb, tb, hb := &boundedWriter{b: b}, &boundedWriter{b: b}, &boundedWriter{b: b}
	if err := p.subject.Execute(sb, data); err != nil {
		return "", "", "", partError("subject", "The "+what+"subject", err)
	}
	if err := p.text.Execute(tb, data); err != nil {
		return "", "", "", partError("text", "The "+what+"plain-text body", err)
	}
	if err := p.html.Execute(hb, data); err != nil {
		return "", "", "", partError("html", "The "+what+"HTML body", err)
	}
	return oneLine(sb.String()), tb.String(), hb.String(), nil
}

// partError is the form's message for a part that did not render.
func partError(field, part string, err error) error {
	if b, ok := renderLimit(err); ok {
		return stacks.FieldErrorf(field, stacks.EINVALID, "%s %s", part, b.msg)
	}
	return stacks.FieldErrorf(field, stacks.EINVALID, "%s does not render: %s", part, templateError(err))
}

// run executes the template of key, and if an administrator's version fails on
// this data (a preview cannot try every patron's), the built-in one: a notice
// goes out whatever the template. A preview (strict) reports the error instead.
//
// A template that went past renderLimits is not tried again in this run: the
// built-in one renders the rest of its messages.
func (r *renderer) run(key, what string, data any) (subject, text, html string, err error) {
	if r.b == nil {
		r.b = newBudget()
	}
	subject, text, html, err = r.tmpl[key].execute(what, data, r.b)
	if err != nil && !r.strict {
		def, _ := DefaultTemplate(key)
		if p, perr := parseTemplate(def); perr == nil {
			if _, bound := renderLimit(err); bound {
				r.tmpl[key], r.b = p, newBudget()
			}
			return p.execute(what, data, newBudget())
		}
	}
	return subject, text, html, err
}

func (r *renderer) section(key string, data TemplateData) (Section, error) {
	subject, text, html, err := r.run(key, "", data)
	if err != nil {
		return Section{}, err
	}
	return Section{Subject: subject, Text: text, HTML: htmltemplate.HTML(html)}, nil
}

func (r *renderer) digest(d DigestData) (Rendered, error) {
	subject, text, html, err := r.run(TemplateDigest, "digest's ", d)
	if err != nil {
		return Rendered{}, err
	}
	if len(d.Sections) == 1 {
		subject = d.Sections[0].Subject
	}
	return Rendered{Subject: subject, Text: text, HTML: html}, nil
}

// oneLine makes a subject one line, whatever a template or the data put in it.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// sampleItems are the items a preview shows for a template.
func sampleItems(key string, now time.Time) []Item {
	due := now.AddDate(0, 0, 3)
	mk := func(trigger string, level int, title, author, barcode string, at time.Time, amount int64) Item {
		return Item{Trigger: trigger, Level: level, Title: title, Author: author, Barcode: barcode, At: at, BranchName: "Central", AmountCents: amount}
	}
	switch key {
	case TemplateDigest:
		return []Item{
			mk(TriggerOverdue, 1, "The Left Hand of Darkness", "Le Guin, Ursula K.", "I00010", now.AddDate(0, 0, -2), 0),
			mk(TriggerPredue, 0, "Middlemarch", "Eliot, George", "I00003", due, 0),
		}
	case TriggerCardExpiry:
		return []Item{mk(TriggerCardExpiry, 20270101, "", "", "", now.AddDate(0, 0, 14), 0)}
	case TriggerLostBill:
		return []Item{mk(TriggerLostBill, 0, "The Dispossessed", "Le Guin, Ursula K.", "I00011", time.Time{}, 1850)}
	}
	trigger, level := key, 0
	if strings.HasPrefix(key, "overdue") {
		trigger, level = TriggerOverdue, int(key[len(key)-1]-'0')
		due = now.AddDate(0, 0, -level*7)
	}
	return []Item{
		mk(trigger, level, "The Left Hand of Darkness", "Le Guin, Ursula K.", "I00010", due, 0),
		mk(trigger, level, "Middlemarch", "Eliot, George", "I00003", due, 0),
	}
}

// previewHook, when set by a test, runs as a preview starts.
var previewHook func()

// Preview renders t (not yet saved) with sample data: a sample patron and items
// of its kind, the other templates built-in. A template that does not parse or
// render is an error for its field.
func Preview(t Template, library string) (Rendered, error) {
	if previewHook != nil {
		previewHook()
	}
	p, err := parseTemplate(t)
	if err != nil {
		return Rendered{}, err
	}
	r := &renderer{library: library, loc: time.UTC, tmpl: map[string]*parsed{}, strict: true}
	for _, k := range TemplateKeys {
		def, _ := DefaultTemplate(k)
		if r.tmpl[k], err = parseTemplate(def); err != nil {
			return Rendered{}, err
		}
	}
	r.tmpl[t.Key] = p
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	patron := PatronData{Name: "Alex Reader", FirstName: "Alex", Surname: "Reader", Card: "P0001", Email: "alex@example.org"}
	// A kind shows as its own message would: its section inside the digest.
	return r.render(patron, now, sampleItems(t.Key, now))
}
