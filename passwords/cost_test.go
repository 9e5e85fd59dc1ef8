package passwords_test

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// BenchmarkPINCost measures what a bcrypt cost means for a patron's PIN: one
// comparison (what every patron's first message at a terminal costs the server,
// on one slot of the comparison pool), and from it how long one CPU core takes
// to try all 10,000 four-digit PINs against one stolen hash, and against the
// hashes of 10,000 patrons. docs/sip.md ("PIN hashing cost") quotes the results
// of make pin-cost.
func BenchmarkPINCost(b *testing.B) {
	for _, cost := range []int{8, 10, 12} {
		b.Run(fmt.Sprintf("cost=%d", cost), func(b *testing.B) {
			h, err := bcrypt.GenerateFromPassword([]byte("1234"), cost)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if bcrypt.CompareHashAndPassword(h, []byte("1234")) != nil {
					b.Fatal("the PIN did not match its hash")
				}
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds())/1000, "ms/compare")
			b.ReportMetric((10000 * per).Minutes(), "core-min/one-patron")
			b.ReportMetric((10000*10000*per).Hours()/24, "core-days/10k-patrons")
			b.ReportMetric(float64(time.Second/per), "compares/s/slot")
		})
	}
}
