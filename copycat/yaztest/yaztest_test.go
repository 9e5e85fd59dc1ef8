package yaztest

import (
	"net"
	"strings"
	"testing"
)

// Without yaz-ztest the tests fail saying how to install it.
func TestMissingBinary(t *testing.T) {
	_, err := startBinary("/nonexistent/yaz-ztest")
	if err == nil || !strings.Contains(err.Error(), "apt-get install yaz") {
		t.Errorf("err %v, want one saying to install yaz", err)
	}
}

// New's server accepts connections, and is gone when the test ends.
func TestNewStops(t *testing.T) {
	var addr string
	t.Run("server", func(t *testing.T) {
		s := New(t)
		addr = s.Addr
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after the test that started it", addr)
	}
}
