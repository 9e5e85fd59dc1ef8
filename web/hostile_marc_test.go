package web_test

import (
	"bytes"
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// TestImportedMarkupEscaped imports a MARC record whose title, author and subject
// carry markup, as a hostile or careless catalogue could, and finds it shown as text
// on the record page, in search results and on the MARC view, never as markup.
func TestImportedMarkupEscaped(t *testing.T) {
	e := newDemoEnv(t)
	const (
		title   = `<script>alert("title")</script>Hostile Title`
		author  = `"><img src=x onerror=alert(1)>`
		subject = `</textarea><script>alert(2)</script>`
	)
	rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
		{Tag: "001", Value: "hostile-1"},
		{Tag: "100", Ind1: '1', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: author}}},
		{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: title}}},
		{Tag: "650", Ind1: ' ', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: subject}}},
	}}
	var file bytes.Buffer
	if err := marc.WriteISO2709(&file, rec); err != nil {
		t.Fatal(err)
	}
	rr, err := marc.NewAutoReader(&file)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.Import(context.Background(), e.DB, rr, catalog.ImportOptions{
		Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK", GenerateItems: true})
	if err != nil || sum.Created != 1 {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	var id int64
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM records WHERE control_number = 'hostile-1'`).Scan(&id)
	}); err != nil {
		t.Fatal(err)
	}

	c := e.deskClient(t)
	for _, path := range []string{
		"/records/" + strconv.FormatInt(id, 10),
		"/records/" + strconv.FormatInt(id, 10) + "/edit",
		"/records/" + strconv.FormatInt(id, 10) + "/hold",
		"/search?" + url.Values{"q": {"hostile title"}}.Encode(),
		"/search?" + url.Values{"q": {"script"}}.Encode(),
	} {
		r := e.get(t, c, path)
		if r.Status != 200 {
			t.Errorf("GET %s: %d", path, r.Status)
			continue
		}
		checkHeaders(t, path, r)
		for _, raw := range []string{"<script>alert", "<img src=x", "</textarea><script>"} {
			if strings.Contains(r.Body, raw) {
				t.Errorf("GET %s: the page carries the imported markup %q unescaped", path, raw)
			}
		}
		if !strings.Contains(r.Body, "&lt;script&gt;") {
			t.Errorf("GET %s: the title is not shown (escaped) at all", path)
		}
	}
}
