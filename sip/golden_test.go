package sip_test

import (
	"bufio"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/sip"
)

var update = flag.Bool("update", false, "rewrite the responses of sip/testdata/*.txt (and fill in request checksums written AZ????)")

// TestGolden replays each transcript in testdata against a server on a fresh copy
// of the small demo library, with the clock standing at dbtest.Monday, and compares every
// response byte for byte, checksums included.
//
// A transcript has one exchange per pair of lines: "> request" then "< response".
// A response line that is "<" alone says the request gets no answer: the next
// exchange (or, at the end, a short wait) shows that none came. Lines starting
// with "#" and blank lines are comments. A request ending in "AZ????" gets its
// checksum filled in by -update. A line "#! settings name=value ..." before the
// first exchange sets the kiosk account's settings, as the administration page
// does: checked_in_ok=0|1, hold_items=barcode|title, sort_bins=MAP|server,
// denied=ID,ID..., contact_without_pin=0|1, same_item=answer|renew,
// language=NNN, branch=CODE, institution=ID. A line
// "#! clock 2006-01-02T15:04:05Z" moves the server's clock there for the
// exchanges after it (a renewal a week after the checkout). A line "#! terminator
// cr|lf|crlf" before the first exchange sets how the requests end (CR when there is
// none); every answer must end the same way.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{SortBins: goldenBins}})
			applySettings(t, e, file)
			replay(t, e, file)
		})
	}
}

// goldenBins is the sorter mapping of the transcripts.
var goldenBins = sip.SortBins{sip.OutcomeShelf: "1", sip.OutcomeHold: "2", sip.OutcomeRemoteHold: "3", sip.OutcomeTransfer: "4", sip.OutcomeException: "9"}

// applySettings applies the "#! settings" lines of a transcript.
func applySettings(t *testing.T, e *env, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "#! settings ")
		if !ok {
			continue
		}
		e.settings(func(u *sip.AccountUpdate) {
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "checked_in_ok":
					u.Settings.CheckedInOK = v == "1"
				case "hold_items":
					u.Settings.HoldItems = sip.HoldItems(v)
				case "sort_bins":
					u.SortBins, u.UseServerBins = v, v == "server"
				case "denied":
					u.Settings.Denied = strings.Split(v, ",")
				case "branch":
					u.BranchCode = v
				case "institution":
					u.Institution = v
				case "contact_without_pin":
					u.Settings.ContactWithoutPIN = v == "1"
				case "same_item":
					u.Settings.SameItemCheckout = sip.SameItemCheckout(v)
				case "language":
					u.Settings.Language = v
				default:
					t.Fatalf("%s: unknown setting %q", file, k)
				}
			}
		})
	}
}

// replay replays a transcript over plain TCP, rewriting it with -update.
func replay(t *testing.T, e *env, file string) {
	replayOver(t, e, file, func() (net.Conn, error) { return net.Dial("tcp", e.addr) }, *update)
}

// terminators are the line terminators a transcript's "#! terminator" may name.
var terminators = map[string]string{"cr": "\r", "lf": "\n", "crlf": "\r\n"}

// replayOver replays a transcript on a connection from dial. With write, the
// -update rewrite of the file happens (responses and AZ???? checksums); without,
// the file is only compared against, so that one run of a transcript may update it
// and another, over another transport, check the result.
func replayOver(t *testing.T, e *env, file string, dial func() (net.Conn, error), write bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	conn, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	term := "\r"
	// readAnswer reads one answer and checks that it ends as the requests do.
	readAnswer := func() (string, error) {
		got, err := r.ReadString(term[len(term)-1])
		if err != nil {
			return got, err
		}
		if !strings.HasSuffix(got, term) || (term == "\n" && strings.HasSuffix(got, "\r\n")) {
			t.Errorf("%s: the answer %q does not end with %q, as the requests do", file, got, term)
		}
		return strings.TrimRight(got, "\r\n"), nil
	}
	changed := false
	// silent is the line of the last request that expects no answer.
	silent := -1
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if at, ok := strings.CutPrefix(line, "#! clock "); ok {
			when, err := time.Parse(time.RFC3339, at)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, i+1, err)
			}
			e.setClock(when)
			continue
		}
		if name, ok := strings.CutPrefix(line, "#! terminator "); ok {
			if term, ok = terminators[strings.TrimSpace(name)]; !ok {
				t.Fatalf("%s:%d: unknown terminator %q (cr, lf or crlf)", file, i+1, name)
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "> ") {
			t.Fatalf("%s:%d: want a request (> ...), got %q", file, i+1, line)
		}
		req := line[2:]
		if write && strings.HasSuffix(req, "AZ????") {
			body := req[:len(req)-4]
			req = body + sip.Checksum([]byte(body))
			lines[i], changed = "> "+req, true
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(req + term)); err != nil {
			t.Fatalf("%s:%d: send: %v", file, i+1, err)
		}
		if i+1 < len(lines) && lines[i+1] == "<" {
			silent = i + 1
			i++
			continue
		}
		got, err := readAnswer()
		if err != nil {
			t.Fatalf("%s:%d: %s: no response: %v", file, i+1, req, err)
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "< ") {
			if !write {
				t.Fatalf("%s:%d: the request has no response line (< ...) after it", file, i+1)
			}
			lines = append(lines[:i+1], append([]string{"< " + got}, lines[i+1:]...)...)
			changed = true
		} else if want := lines[i+1][2:]; got != want {
			if write {
				lines[i+1], changed = "< "+got, true
			} else {
				t.Errorf("%s:%d: %s\n got: %s\nwant: %s", file, i+1, req, got, want)
			}
		}
		i++
	}
	if silent >= 0 {
		// Whatever came after the last exchange would be the answer to a request
		// that should have none.
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if got, err := r.ReadString(term[len(term)-1]); err == nil || got != "" {
			t.Errorf("%s:%d: want no answer, got %q", file, silent, got)
		}
	}
	if changed {
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", file)
	}
}
