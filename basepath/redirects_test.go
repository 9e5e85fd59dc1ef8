package basepath_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedirectsGoThroughTheBase reads the sites' sources: every redirect and every
// Location header must be built in the one place per site that puts the request's
// base path in front (web/base_path.go, opac/base_path.go, this package's own
// trailing-slash redirect). TestBasePath renders every page under a base path but
// sends few POSTs; a handler that redirected with http.Redirect(w, r, "/x", ...)
// after a form post would escape the base without it noticing. This test does.
func TestRedirectsGoThroughTheBase(t *testing.T) {
	allowed := map[string]bool{
		filepath.Join("web", "base_path.go"):     true,
		filepath.Join("opac", "base_path.go"):    true,
		filepath.Join("basepath", "basepath.go"): true,
	}
	root := filepath.Join("..")
	checked := 0
	for _, dir := range []string{"web", "opac", "basepath", filepath.Join("cmd", "stacks")} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			rel, _ := filepath.Rel(root, f)
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || allowed[rel] {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "http" && sel.Sel.Name == "Redirect" {
					t.Errorf("%s: http.Redirect outside the base-path helpers: use redirect(w, r, path, code), which puts the base path in front", fset.Position(call.Pos()))
				}
				// w.Header().Set("Location", ...) and htmx's redirect headers.
				if (sel.Sel.Name == "Set" || sel.Sel.Name == "Add") && len(call.Args) == 2 {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						switch v := strings.ToLower(strings.Trim(lit.Value, "`\"")); v {
						case "location", "hx-redirect", "hx-location", "hx-push-url", "refresh":
							t.Errorf("%s: the %s header set by hand: build it with basepath.URL so it stays under the base path", fset.Position(call.Pos()), v)
						}
					}
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Fatalf("read only %d source files: is the test running from basepath/?", checked)
	}
}
