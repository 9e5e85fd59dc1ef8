package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// FloodConfig is a connection test: Conns clients, each with one keep-alive
// connection, send GET URL back to back for Duration (hey -c Conns -z Duration).
type FloodConfig struct {
	URL      string
	Conns    int
	Duration time.Duration
	// Header is sent with every request (a signed-in session's Cookie).
	Header http.Header
	// Timeout bounds each request (default 10 s).
	Timeout time.Duration
}

// FloodResult is a connection test's outcome.
type FloodResult struct {
	URL      string
	Conns    int
	Elapsed  time.Duration
	Requests int // answered 200
	// Errors are requests answered with another status or not at all, those that
	// opened the connections included.
	Errors int
	// ErrorKinds are the distinct errors seen (at most 20), with how often.
	ErrorKinds map[string]int
	Latency    Summary
	// RPS is successful requests a second.
	RPS float64
}

// Flood runs a connection test. Every connection is opened before the clock
// starts, so the figure is of requests on established connections.
func Flood(ctx context.Context, cfg FloodConfig) (*FloodResult, error) {
	if err := CheckLoopback(cfg.URL); err != nil {
		return nil, err
	}
	if cfg.Conns <= 0 || cfg.Duration <= 0 {
		return nil, errors.New("a connection test needs a number of connections and a duration")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	clients := make([]*http.Client, cfg.Conns)
	for i := range clients {
		clients[i] = &http.Client{
			Timeout: cfg.Timeout,
			Transport: &http.Transport{
				DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 1,
				MaxConnsPerHost:     1,
				IdleConnTimeout:     time.Minute,
				DisableCompression:  true,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	defer func() {
		for _, c := range clients {
			c.CloseIdleConnections()
		}
	}()

	rec := &recorder{}
	get := func(ctx context.Context, c *http.Client) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
		if err != nil {
			return 0, err
		}
		for k, v := range cfg.Header {
			req.Header[k] = v
		}
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return d, nil
	}

	// Open the connections, a few dozen at a time, with one request each.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	warmErrs := make([]error, cfg.Conns)
	for i, c := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, warmErrs[i] = get(ctx, c)
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range warmErrs {
		if err != nil {
			failed++
			rec.fail(fmt.Errorf("opening the connection: %w", err))
		}
	}
	if failed == cfg.Conns {
		return nil, fmt.Errorf("open %d connections to %s: every one failed: %w", cfg.Conns, cfg.URL, firstErr(warmErrs))
	}

	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				// A request in progress at the end is finished, not cut off.
				d, err := get(context.WithoutCancel(runCtx), c)
				if err != nil {
					rec.fail(err)
					continue
				}
				rec.ok(d, 0, false)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sum := rec.summary(elapsed)
	return &FloodResult{URL: cfg.URL, Conns: cfg.Conns, Elapsed: elapsed, Requests: sum.Count, Errors: sum.Errors,
		ErrorKinds: rec.errorSeen, Latency: sum, RPS: sum.TPS}, nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// HelloHandler answers every request with a short text, as the smallest net/http
// server does: the yardstick a connection test of Stacks is compared with, on the
// same machine in the same run, so the ratio means something when the absolute
// figure (which depends on the machine) does not.
func HelloHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello, world!\n")
	})
}

// ServeHello serves HelloHandler on addr (a loopback address) until ctx ends.
// ready, if set, is called with the address once it listens.
func ServeHello(ctx context.Context, addr string, ready func(net.Addr)) error {
	if err := CheckLoopback(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: HelloHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shutdownCtx)
}
