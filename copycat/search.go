package copycat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultTimeout is a target's timeout when it names none.
const DefaultTimeout = 10 * time.Second

// Searcher asks targets for records. Its zero value works; Client, if set, is the
// HTTP client SRU requests go through.
type Searcher struct {
	Client *http.Client
}

// Search runs q at every target in targets at once, each under its own timeout
// (and all under ctx), and returns one Result per target in the targets' order.
// A target that fails has its Err set; Search itself never fails. max bounds
// the records taken from each target (DefaultMaxRecords when 0).
func (s *Searcher) Search(ctx context.Context, targets []Target, q Query, max int) []Result {
	if max <= 0 {
		max = DefaultMaxRecords
	}
	max = min(max, MaxRecords)
	out := make([]Result, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.searchOne(ctx, t, q, max)
		}()
	}
	wg.Wait()
	return out
}

// searchOne asks one target, bounding it by its timeout, and turns its failure
// into words a cataloguer can act on.
func (s *Searcher) searchOne(ctx context.Context, t Target, q Query, max int) Result {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var res Result
	var err error
	switch t.Kind {
	case SRU:
		client := s.Client
		if client == nil {
			client = http.DefaultClient
		}
		res, err = searchSRU(tctx, client, t, q, max)
	case Z3950:
		res, err = searchZ3950(tctx, t, q, max)
	default:
		err = fmt.Errorf("its protocol %q is neither SRU nor Z39.50", t.Kind)
	}
	res.Target = t
	res.Elapsed = time.Since(start)
	if err != nil {
		res.Records = nil
		res.Err = &TargetError{Target: t.Name, Reason: describe(ctx, tctx, err, timeout), Err: err}
	}
	return res
}

// describe says why a target gave no records.
func describe(parent, tctx context.Context, err error, timeout time.Duration) string {
	var pe *protocolError
	var de *diagnosticError
	var oe *net.OpError
	var dnsErr *net.DNSError
	switch {
	case parent.Err() != nil:
		return "the search was cancelled"
	case tctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "timed out after " + formatSeconds(timeout)
	case errors.As(err, &pe):
		return pe.reason
	case errors.As(err, &de):
		return de.reason
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("its host name %q is not known", dnsErr.Name)
	case errors.As(err, &oe) && oe.Op == "dial":
		return "refused the connection (" + errText(oe.Err) + ")"
	case errors.As(err, &oe):
		return "the connection failed (" + errText(oe.Err) + ")"
	}
	return err.Error()
}

func errText(err error) string {
	if err == nil {
		return "no reason given"
	}
	return err.Error()
}

// formatSeconds writes a timeout the way a person says it: "3 s", "1.5 s".
func formatSeconds(d time.Duration) string {
	s := d.Seconds()
	if s == float64(int64(s)) {
		return fmt.Sprintf("%d s", int64(s))
	}
	return fmt.Sprintf("%.1f s", s)
}
