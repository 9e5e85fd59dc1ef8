// Command cgi-go is the floor of a Go CGI program: Go's start-up and net/http/cgi
// reading the request, then "ok". cgibench -floors times it beside stacks
// (docs/performance.md, "CGI and FastCGI").
package main

import (
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
)

func main() {
	err := cgi.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cgi-go:", err)
		os.Exit(1)
	}
}
