package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stacks-ils/stacks/opac"
)

// TestOPACAddr: the patrons' catalogue is off unless asked for; serve --demo
// turns it on at the port after the staff site's, unless --opac-addr (or
// STACKS_OPAC_ADDR) says otherwise, an empty --opac-addr= included.
func TestOPACAddr(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		staffAddr string
		demo      bool
		want      string
		defaulted bool
	}{
		{"OffByDefault", nil, ":8080", false, "", false},
		{"Given", []string{"--opac-addr", ":9000"}, ":8080", false, ":9000", false},
		{"DemoNextPort", nil, ":8080", true, ":8081", true},
		{"DemoLoopback", nil, "127.0.0.1:41000", true, "127.0.0.1:41001", true},
		{"DemoGiven", []string{"--opac-addr", "127.0.0.1:7000"}, ":8080", true, "127.0.0.1:7000", false},
		{"DemoTurnedOff", []string{"--opac-addr="}, ":8080", true, "", false},
		{"DemoNoPort", nil, "localhost", true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STACKS_OPAC_ADDR", "")
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := registerOPACFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			f.defaults(fs, tc.staffAddr, tc.demo)
			if f.addr != tc.want || f.defaulted != tc.defaulted {
				t.Errorf("addr %q (defaulted %v), want %q (%v)", f.addr, f.defaulted, tc.want, tc.defaulted)
			}
		})
	}
	t.Run("Environment", func(t *testing.T) {
		t.Setenv("STACKS_OPAC_ADDR", "127.0.0.1:7001")
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f := registerOPACFlags(fs)
		fs.Parse(nil)
		f.defaults(fs, ":8080", true)
		if f.addr != "127.0.0.1:7001" {
			t.Errorf("addr %q, want the environment's", f.addr)
		}
	})
}

// TestOPACConfig: the patrons' site has its own Secure flag and trusted
// proxies, apart from the staff site's --secure-cookies.
func TestOPACConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		secure  bool
		proxies int
		err     bool
	}{
		{"Defaults", nil, "", false, 0, false},
		{"StaffSecureOnly", []string{"--secure-cookies"}, "", false, 0, false},
		{"OPACSecure", []string{"--opac-secure-cookies"}, "", true, 0, false},
		{"OPACSecureEnv", nil, "1", true, 0, false},
		{"TrustedProxies", []string{"--opac-trusted-proxy", "127.0.0.1, 10.0.0.0/8"}, "", false, 2, false},
		{"ErrTrustedProxy", []string{"--opac-trusted-proxy", "proxy.example"}, "", false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STACKS_OPAC_SECURE_COOKIES", tc.env)
			t.Setenv("STACKS_OPAC_TRUSTED_PROXY", "")
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Bool("secure-cookies", false, "")
			f := registerOPACFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config(opac.Config{})
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if tc.err {
				return
			}
			if cfg.SecureCookies != tc.secure || len(cfg.TrustedProxies) != tc.proxies {
				t.Errorf("secure %v, %d proxies; want %v, %d", cfg.SecureCookies, len(cfg.TrustedProxies), tc.secure, tc.proxies)
			}
		})
	}
}
