// Package kittest holds the test support both sites' tests (web, opac) use: a
// request sent and its response read whole, and the tables of docs/ that tests
// hold the routers to.
package kittest

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Response is a response read whole.
type Response struct {
	Status   int
	Location string
	Body     string
	Header   http.Header
}

// Do sends req with c and reads the whole response; a failure to send fails the test.
func Do(t testing.TB, c *http.Client, req *http.Request) Response {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return Response{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(b), Header: resp.Header}
}

// DocTable returns row's submatches for each line that matches it in the
// section of the Markdown file path whose heading contains heading (up to the
// next heading); a file that cannot be read fails the test.
func DocTable(t testing.TB, path, heading string, row *regexp.Regexp) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			in = strings.Contains(line, heading)
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				out = append(out, m)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
