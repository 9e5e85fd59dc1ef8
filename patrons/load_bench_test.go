package patrons_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

// studentsCSV is a school's file of n students: card S00000..., a student id,
// the child category at Eastside, expiring at the end of the school year.
func studentsCSV(n int, category, expires string, pins bool) []byte {
	var b bytes.Buffer
	b.WriteString("cardnumber,student_id,surname,firstname,categorycode,branchcode,dateexpiry,email,phone,address")
	if pins {
		b.WriteString(",pin")
	}
	b.WriteString("\n")
	for i := range n {
		fmt.Fprintf(&b, "S%06d,ST-%06d,Student%d,Pupil,%s,EAS,%s,pupil%d@school.example.org,555 %04d,\"%d School Lane, Eastside\"",
			i, i, i, category, expires, i, i%10000, i)
		if pins {
			fmt.Fprintf(&b, ",%04d", 1000+i%9000)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// benchLoad loads file into a fresh demo library b.N times, after loading before
// (if any) untimed, and reports rows a second and how long the write transaction
// ran.
func benchLoad(b *testing.B, rows int, before, file []byte, opt patrons.LoadOptions) {
	var write, hash, total, deskWorst time.Duration
	for range b.N {
		b.StopTimer()
		d := mustOpenDB(b)
		if before != nil {
			if _, err := patrons.Load(context.Background(), d, bytes.NewReader(before), patrons.LoadOptions{Actor: desk}); err != nil {
				b.Fatal(err)
			}
		}
		opt.Actor = desk
		// A desk writes every 10 ms during the load: its slowest write is the
		// stall the load causes at the counter.
		stop := make(chan struct{})
		done := make(chan time.Duration)
		go func() {
			var worst time.Duration
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					done <- worst
					return
				case <-tick.C:
				}
				t0 := time.Now()
				if err := d.Write(context.Background(), func(tx *db.Tx) error {
					_, err := tx.Exec(`UPDATE patrons SET notes = notes WHERE card = 'P0001'`)
					return err
				}); err != nil {
					b.Error(err)
				}
				worst = max(worst, time.Since(t0))
			}
		}()
		b.StartTimer()
		start := time.Now()
		res, err := patrons.Load(context.Background(), d, bytes.NewReader(file), opt)
		total += time.Since(start)
		close(stop)
		deskWorst = max(deskWorst, <-done)
		if err != nil {
			b.Fatal(err)
		}
		if res.Created+res.Updated != rows {
			b.Fatalf("result %+v", res.Created+res.Updated)
		}
		write += res.WriteTime
		hash += res.HashTime
	}
	b.ReportMetric(float64(rows*b.N)/total.Seconds(), "rows/s")
	b.ReportMetric(float64(write.Milliseconds())/float64(b.N), "write-ms")
	b.ReportMetric(float64(hash.Milliseconds())/float64(b.N), "hash-ms")
	b.ReportMetric(float64(deskWorst.Milliseconds()), "desk-worst-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLoadCreate10000: 10,000 new patrons from one file, in one transaction.
func BenchmarkLoadCreate10000(b *testing.B) {
	benchLoad(b, 10000, nil, studentsCSV(10000, "CHILD", "2027-08-31", false), patrons.LoadOptions{})
}

// BenchmarkLoadCreateWebMax: the largest file the administration page takes
// (patrons.WebLoadRows): how long the desk waits behind its transaction.
func BenchmarkLoadCreateWebMax(b *testing.B) {
	benchLoad(b, patrons.WebLoadRows, nil, studentsCSV(patrons.WebLoadRows, "CHILD", "2027-08-31", false), patrons.LoadOptions{MaxRows: patrons.WebLoadRows})
}

// BenchmarkLoadYearlyUpdate6000: a school's yearly update of 6,000 students
// matched by student id: new category and expiry for every one.
func BenchmarkLoadYearlyUpdate6000(b *testing.B) {
	// Last year's students exist; their cards run to the end of the term (an
	// expiry before today would be a problem on the row).
	benchLoad(b, 6000, studentsCSV(6000, "CHILD", "2026-12-31", false), studentsCSV(6000, "ADULT", "2027-08-31", false),
		patrons.LoadOptions{Match: patrons.MatchExternalID})
}

// BenchmarkLoadCreatePINs100: 100 new patrons with a PIN each, hashed at
// the real bcrypt cost (outside the write transaction).
func BenchmarkLoadCreatePINs100(b *testing.B) {
	old := passwords.BcryptCost
	passwords.BcryptCost = bcrypt.DefaultCost
	defer func() { passwords.BcryptCost = old }()
	benchLoad(b, 100, nil, studentsCSV(100, "CHILD", "2027-08-31", true), patrons.LoadOptions{})
}
