package notices_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
)

// previewWithin runs notices.Preview and fails the test if it has not returned
// within a bound far above what a template needs (the render's own time bound
// is 2 s): a template that loops for minutes is the failure being tested.
func previewWithin(t *testing.T, tm notices.Template) (notices.Rendered, error) {
	t.Helper()
	type result struct {
		out notices.Rendered
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := notices.Preview(tm, "Town Library")
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("the preview had not returned after 30 s")
		return notices.Rendered{}, nil
	}
}

// doublingTemplates is a chain of n templates, each calling the next twice:
// 2^n calls from a few hundred bytes, with no range at all.
func doublingTemplates(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{{define "t%d"}}{{template "t%d"}}{{template "t%d"}}{{end}}`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `{{define "t%d"}}{{end}}{{template "t0"}}`, n)
	return b.String()
}

// TestTemplateRenderBounds: a template that loops, calls itself or writes
// without end stops with a message for its field, the message says what to
// look for, and the preview allocates a bounded amount of memory. On the
// notices' data a template's work can only grow through ranges, template calls,
// printf and the escaping functions: each is bounded.
func TestTemplateRenderBounds(t *testing.T) {
	def, _ := notices.DefaultTemplate(notices.TemplateOverdue1)
	halfMB := `{{$x := "0123456789abcdef"}}{{range 15}}{{$x = printf "%s%s" $x $x}}{{end}}`
	for _, tc := range []struct {
		name, field, text, want string
		memory                  bool
	}{
		{"RangeOverHugeInt", "text", `{{range 80000000}}{{end}}`, "loops or calls templates more than 100,000 times", true},
		{"NestedRanges", "html", `{{range 100000}}{{range 100000}}{{end}}{{end}}`, "loops or calls templates", true},
		{"RangeOverItemsInRange", "text", `{{range 1000000}}{{range $.Items}}{{end}}{{end}}`, "loops or calls templates", true},
		{"TemplateCallsDoubling", "text", doublingTemplates(40), "loops or calls templates", true},
		{"HundredMegabytes", "html", `{{range 10000000}}0123456789{{end}}`, "loops or calls templates", true},
		{"TwoMegabytes", "text", `{{range 90000}}01234567890123456789{{end}}`, "writes more than 1024 KB", true},
		{"PrintfWidth", "subject", `{{printf "%0100000000d" 1}}`, "width or precision over 1,000", true},
		{"PrintfStarWidth", "html", `{{printf "%0*d" 100000000 1}}`, "width or precision given as an argument", true},
		{"GrowingVariable", "text", `{{$x := "ab"}}{{range 27}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}`, "writes more than", true},
		{"GrowingPrint", "html", `{{$x := "ab"}}{{range 27}}{{$x = print $x $x}}{{end}}{{len $x}}`, "writes more than", true},
		{"GrowingEscape", "text", `{{$x := "&&"}}{{range 27}}{{$x = html $x $x}}{{end}}{{len $x}}`, "writes more than", true},
		{"SlowSteps", "text", halfMB + `{{range 99000}}{{$y := printf "%s%s" $x (slice $x 16)}}{{end}}`, "takes more than 2s to render", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := def
			switch tc.field {
			case "subject":
				tm.Subject = tc.text
			case "text":
				tm.Text = tc.text
			case "html":
				tm.HTML = tc.text
			}
			if !strings.Contains(tc.want, "takes more than") {
				// The bound under test is not the wall time: on a loaded
				// machine (the race detector, other tests) the time bound
				// could otherwise be met first.
				defer notices.SetRenderTime(time.Minute)()
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := previewWithin(t, tm)
			runtime.ReadMemStats(&after)
			if err == nil || stacks.ErrorField(err) != tc.field || !strings.Contains(stacks.ErrorMessage(err), tc.want) {
				t.Fatalf("err = %v (field %q), want one for field %q saying %q", err, stacks.ErrorField(err), tc.field, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; tc.memory && alloc > 64<<20 {
				t.Errorf("the preview allocated %d MB", alloc>>20)
			}
		})
	}

	t.Run("OrdinaryTemplatesUnchanged", func(t *testing.T) {
		// The guard writes nothing: not in text, not in a script, where
		// html/template would print an empty action as "".
		tm := def
		tm.Text = `{{define "item"}}[{{.Title}}]{{end}}{{range $i, $it := .Items}}{{if $i}}, {{end}}{{template "item" $it}}{{end}}{{range .Nope}}x{{else}}.{{end}}`
		tm.HTML = `<script>var n = [{{range .Items}}1,{{end}}];</script><p>{{printf "%05d" 42}} {{print "a" 1}}</p>`
		tm.Text = strings.Replace(tm.Text, ".Nope", "$.Items", 1)
		out, err := previewWithin(t, tm)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.Text, "[The Left Hand of Darkness], [Middlemarch]x") {
			t.Errorf("text %q", out.Text)
		}
		if !strings.Contains(out.HTML, "<script>var n = [1,1,];</script><p>00042 a1</p>") {
			t.Errorf("html %q", out.HTML)
		}
	})
}

// TestSaveTemplateRendersBeforeWriting: while a template being saved renders,
// another write (a check-in, say) goes through: the render is not inside the
// write transaction.
func TestSaveTemplateRendersBeforeWriting(t *testing.T) {
	l := newLib(t, "UTC")
	started, release := make(chan struct{}), make(chan struct{})
	defer notices.SetPreviewHook(func() {
		started <- struct{}{}
		<-release
	})()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	tm, _ := notices.DefaultTemplate(notices.TriggerPredue)
	tm.Subject = "Soon: {{.Count}}"
	saved := make(chan error, 1)
	go func() {
		saved <- notices.NewService(l.d, nil).SaveTemplate(context.Background(), stacks.Actor{StaffID: 1, Name: "admin"}, tm)
	}()
	<-started
	wrote := make(chan error, 1)
	go func() {
		wrote <- l.d.Write(context.Background(), func(tx *db.Tx) error {
			return tx.Audit(stacks.Actor{Name: "desk"}, "test.write", "test", 0, "during a template's render")
		})
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("a write while a template rendered: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		released = true
		<-wrote
		t.Fatal("a write waited 10 s for a template's render to end")
	}
	select {
	case err := <-saved:
		t.Fatalf("the save ended (%v) before its render was let go", err)
	default:
	}
	close(release)
	released = true
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if n := l.queryInt(`SELECT count(*) FROM notice_templates WHERE kind = ? AND subject = ?`, notices.TriggerPredue, tm.Subject); n != 1 {
		t.Fatalf("%d templates saved", n)
	}
}

// TestStoredTemplateOverBoundsFallsBack: a stored template that loops without
// end (saved before the bounds, or written into the database) does not stall
// the daily run: its messages go out with the built-in template.
func TestStoredTemplateOverBoundsFallsBack(t *testing.T) {
	l := newLib(t, "UTC")
	def, _ := notices.DefaultTemplate(notices.TemplateOverdue1)
	l.exec(`INSERT INTO notice_templates (kind, subject, body_text, body_html, updated_at) VALUES (?, ?, ?, ?, ?)`,
		notices.TemplateOverdue1, def.Subject, `{{range 100000}}{{range 100000}}{{end}}{{end}}`, def.HTML, "2026-11-01T00:00:00Z")
	for i, card := range []string{"PA", "PB"} {
		p := l.patron(card, "Loop", "Back", card+"@example.org")
		l.loan(p, fmt.Sprintf("Book %d", i), at(time.UTC, 2026, 11, 30, 20, 0))
	}
	done := make(chan struct{})
	go func() {
		l.run(notices.RunOptions{})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the daily run had not ended after 60 s")
	}
	ms := l.messages(notices.Filter{})
	if len(ms) != 2 {
		t.Fatalf("%d messages, want 2", len(ms))
	}
	for _, m := range ms {
		if !strings.Contains(m.Text, "These items were due back") {
			t.Errorf("message %q, want the built-in overdue text", m.Text)
		}
	}
}
