package sip_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/sip"
)

// TestChecksum checks the checksum against the resend requests of the specification
// and a message from another SIP2 implementation's tests.
func TestChecksum(t *testing.T) {
	for _, msg := range []string{
		"97AZFEF5",
		"96AZFEF6",
		"15+20130915    1854553BSpickupLocation|BY3|AO|AApatronId|ABitemId|AY1AZE9BF",
	} {
		body, want := msg[:len(msg)-4], msg[len(msg)-4:]
		if got := sip.Checksum([]byte(body)); got != want {
			t.Errorf("Checksum(%q) = %s, want %s", body, got, want)
		}
	}
	if got, want := sip.AddErrorDetection("9900302.00", 12), "9900302.00AY2AZFCA4"; got != want {
		t.Errorf("AddErrorDetection = %s, want %s", got, want)
	}
	if got, want := sip.AddErrorDetection("97", 3), "97AZFEF5"; got != want {
		t.Errorf("AddErrorDetection(97) = %s, want %s (no sequence number)", got, want)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want sip.Message
		err  error
	}{
		{"Login", "9300CNkiosk|COkiosk|CPCEN|",
			sip.Message{ID: "93", Fixed: "00", Seq: -1, Fields: []sip.Field{{"CN", "kiosk"}, {"CO", "kiosk"}, {"CP", "CEN"}}}, nil},
		{"LastFieldWithoutBar", "9300CNkiosk|COkiosk",
			sip.Message{ID: "93", Fixed: "00", Seq: -1, Fields: []sip.Field{{"CN", "kiosk"}, {"CO", "kiosk"}}}, nil},
		{"ErrorDetection", "9900302.00AY2AZFCA4",
			sip.Message{ID: "99", Fixed: "00302.00", Seq: 2, Checksum: "FCA4", ChecksumOK: true}, nil},
		{"ErrorDetectionAfterField", "1720261130    100000AOCEN|ABI00001|AY5AZ" + sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AY5AZ")),
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: 5, Checksum: sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AY5AZ")), ChecksumOK: true,
				Fields: []sip.Field{{"AO", "CEN"}, {"AB", "I00001"}}}, nil},
		{"LowerCaseChecksum", "9900302.00AY2AZfca4",
			sip.Message{ID: "99", Fixed: "00302.00", Seq: 2, Checksum: "fca4", ChecksumOK: true}, nil},
		{"SequenceWithoutChecksum", "9900302.00AY4",
			sip.Message{ID: "99", Fixed: "00302.00", Seq: 4}, nil},
		// "AY" inside a value is data, not a sequence number.
		{"AYInsideAValue", "1720261130    100000ABBAY1",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Fields: []sip.Field{{"AB", "BAY1"}}}, nil},
		// "AZ" and four characters at the end of a value are data, not a checksum
		// (this message, sent without error detection, was once answered 96).
		{"AZInsideAValue", "1720261201    134052AOCEN|ABXAZ1234",
			sip.Message{ID: "17", Fixed: "20261201    134052", Seq: -1, Fields: []sip.Field{{"AO", "CEN"}, {"AB", "XAZ1234"}}}, nil},
		{"ChecksumWithoutSequence", "1720261130    100000AOCEN|ABI00001|AZ" + sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AZ")),
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Checksum: sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AZ")), ChecksumOK: true,
				Fields: []sip.Field{{"AO", "CEN"}, {"AB", "I00001"}}}, nil},
		{"TrailingCRLF", "9900302.00\r\n", sip.Message{ID: "99", Fixed: "00302.00", Seq: -1}, nil},
		{"EmptyValue", "9300CN|CO|", sip.Message{ID: "93", Fixed: "00", Seq: -1, Fields: []sip.Field{{"CN", ""}, {"CO", ""}}}, nil},
		{"Resend", "97", sip.Message{ID: "97", Seq: -1}, nil},
		{"BadChecksum", "9900302.00AY2AZ0000", sip.Message{ID: "99", Seq: 2, Checksum: "0000"}, sip.ErrChecksum},
		{"NotHex", "9900302.00AY2AZZZZZ", sip.Message{ID: "99", Seq: 2, Checksum: "ZZZZ"}, sip.ErrChecksum},
		{"Unknown", "0220261130    100000AOCEN|", sip.Message{ID: "02", Seq: -1}, sip.ErrUnknown},
		{"BlockPatron", "01Y20261130    100000AOCEN|ALCard retained|AAP0001|",
			sip.Message{ID: "01", Fixed: "Y20261130    100000", Seq: -1, Fields: []sip.Field{{"AO", "CEN"}, {"AL", "Card retained"}, {"AA", "P0001"}}}, nil},
		// An identifier that is not two digits is not a message that could be
		// supported: it could not be read.
		{"NotDigits", "XX", sip.Message{ID: "XX", Seq: -1}, sip.ErrMalformed},
		{"ShortFixedPart", "23001", sip.Message{ID: "23", Seq: -1}, sip.ErrMalformed},
		{"FieldCutShort", "9300CNkiosk|C", sip.Message{ID: "93", Fixed: "00", Seq: -1, Fields: []sip.Field{{"CN", "kiosk"}}}, sip.ErrMalformed},
		// What real terminals send, read as the reference servers read it.
		{"BarAfterFixedPart", "9900002.00|", sip.Message{ID: "99", Fixed: "00002.00", Seq: -1}, nil},
		{"BarBeforeErrorDetection", "9900002.00|AY1AZFC2C", sip.Message{ID: "99", Fixed: "00002.00", Seq: 1, Checksum: "FC2C", ChecksumOK: true}, nil},
		{"BarBetweenAYAndAZ", "9900302.00AY1|AZ" + sip.Checksum([]byte("9900302.00AY1|AZ")),
			sip.Message{ID: "99", Fixed: "00302.00", Seq: 1, Checksum: sip.Checksum([]byte("9900302.00AY1|AZ")), ChecksumOK: true}, nil},
		{"BarAfterChecksum", "1720261130    100000AOCEN|ABI00001|AY5AZ" + sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AY5AZ")) + "|",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: 5, Checksum: sip.Checksum([]byte("1720261130    100000AOCEN|ABI00001|AY5AZ")), ChecksumOK: true,
				Fields: []sip.Field{{"AO", "CEN"}, {"AB", "I00001"}}}, nil},
		{"SequenceAndBarWithoutChecksum", "9900302.00AY4|", sip.Message{ID: "99", Fixed: "00302.00", Seq: 4}, nil},
		{"EmptyFieldAtEnd", "1720261130    100000AOCEN|ABI00001||",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Fields: []sip.Field{{"AO", "CEN"}, {"AB", "I00001"}}}, nil},
		{"EmptyFieldBetween", "1720261130    100000AOCEN||ABI00001|",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Fields: []sip.Field{{"AO", "CEN"}, {"AB", "I00001"}}}, nil},
		{"FieldsInAnyOrderUnknownKept", "1720261130    100000ABI00001|XXwhat|AOCEN|",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Fields: []sip.Field{{"AB", "I00001"}, {"XX", "what"}, {"AO", "CEN"}}}, nil},
		// A client that counts past 9: read, and answered with its number.
		{"TwoDigitSequence", "9909992.00|AY10AZ" + sip.Checksum([]byte("9909992.00|AY10AZ")),
			sip.Message{ID: "99", Fixed: "09992.00", Seq: 10, Checksum: sip.Checksum([]byte("9909992.00|AY10AZ")), ChecksumOK: true}, nil},
		{"FourDigitsAreData", "1720261130    100000ABI1|AY1234",
			sip.Message{ID: "17", Fixed: "20261130    100000", Seq: -1, Fields: []sip.Field{{"AB", "I1"}, {"AY", "1234"}}}, nil},
		{"LF", "9900302.00\n", sip.Message{ID: "99", Fixed: "00302.00", Seq: -1}, nil},
		{"BarInFixedPart", "2300120261130|AOCEN|", sip.Message{ID: "23", Seq: -1}, sip.ErrMalformed},
		{"Empty", "", sip.Message{Seq: -1}, sip.ErrMalformed},
		{"OneByte", "9", sip.Message{Seq: -1}, sip.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sip.Parse([]byte(tt.in))
			if !errors.Is(err, tt.err) {
				t.Fatalf("Parse(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) =\n%#v\nwant\n%#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestParseNamesTheByte: what cannot be read is reported with where it stopped,
// for the log line of the 96 it gets.
func TestParseNamesTheByte(t *testing.T) {
	for _, tt := range []struct {
		in     string
		offset int
		end    bool
	}{
		{"X9", 0, false},
		{"9\xc3", 1, false},
		{"23001", 5, true},
		{"2300120261130|AOCEN|", 13, false},
		{"9300CNkiosk|C", 12, false},
	} {
		_, err := sip.Parse([]byte(tt.in))
		var be *sip.ByteError
		if !errors.As(err, &be) || !errors.Is(err, sip.ErrMalformed) {
			t.Errorf("Parse(%q): %v, want a *ByteError", tt.in, err)
			continue
		}
		if be.Offset != tt.offset || be.End != tt.end {
			t.Errorf("Parse(%q): %+v, want offset %d, end %t", tt.in, be, tt.offset, tt.end)
		}
		if !strings.Contains(err.Error(), fmt.Sprint(tt.offset)) {
			t.Errorf("Parse(%q): %q does not name the byte", tt.in, err)
		}
	}
}

func TestMessageLookup(t *testing.T) {
	m, err := sip.Parse([]byte("2300120261130    100000AOCEN|AAP0001|AC|AD|"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Lookup("AD"); !ok || v != "" {
		t.Errorf("Lookup(AD) = %q, %v; want the empty field", v, ok)
	}
	if _, ok := m.Lookup("BP"); ok {
		t.Error("Lookup(BP) found a field that was not sent")
	}
	if got := m.Get("AA"); got != "P0001" {
		t.Errorf("Get(AA) = %q", got)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9300CNkiosk|COsecret|CPCEN|", "9300CNkiosk|CO****|CPCEN|"},
		{"2300120261130    100000AOCEN|AAP0001|ACterm|AD1234|", "2300120261130    100000AOCEN|AAP0001|AC****|AD****|"},
		{"2300120261130    100000AOCEN|AAP0001|AC|AD", "2300120261130    100000AOCEN|AAP0001|AC|AD"},
		{"9300COpass", "9300CO****"},
		// The fixed part is never taken for a field: 93's is "CO" here.
		{"93COCNx|", "93COCNx|"},
		{"9", "9"},
	}
	for _, tt := range tests {
		if got := sip.Redact([]byte(tt.in)); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseSortBins(t *testing.T) {
	bins, err := sip.ParseSortBins(" hold=1, transfer=2,shelf=3 ")
	if err != nil {
		t.Fatal(err)
	}
	for o, want := range map[sip.Outcome]string{sip.OutcomeHold: "1", sip.OutcomeRemoteHold: "2", sip.OutcomeTransfer: "2", sip.OutcomeShelf: "3", sip.OutcomeException: ""} {
		if got := bins.Bin(o); got != want {
			t.Errorf("Bin(%s) = %q, want %q", o, got, want)
		}
	}
	if got := bins.String(); got != "shelf=3,hold=1,transfer=2" {
		t.Errorf("String() = %q", got)
	}
	if bins, err := sip.ParseSortBins(""); err != nil || len(bins) != 0 {
		t.Errorf("ParseSortBins(\"\") = %v, %v; want no bins", bins, err)
	}
	for _, bad := range []string{"hold", "hold=", "attic=1", "hold=a|b"} {
		if _, err := sip.ParseSortBins(bad); err == nil {
			t.Errorf("ParseSortBins(%q) accepted", bad)
		}
	}
}

// TestMessageLabel: a request's metrics label is its identifier when the server
// answers it, and "other" for anything else, invalid UTF-8 included (
// finding 8).
func TestMessageLabel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9300CNkiosk|COkiosk|", "93"},
		{"9900302.00AY2AZFCA4", "99"},
		{"97", "97"},
		{"09N20261130    100000", "09"},
		{"01N20261130    100000", "01"},
		{"2520261130    100000", "25"},
		{"1920261130    100000", "19"},
		{"0220261130    100000", sip.OtherMessage}, // no such message
		{"XX", sip.OtherMessage},
		{"9", sip.OtherMessage},
		{"", sip.OtherMessage},
		{"9\xC3", sip.OtherMessage},
		{"\xff\xfe", sip.OtherMessage},
		{"\xC3\xA9", sip.OtherMessage}, // valid UTF-8, still not a message
	}
	for _, tt := range tests {
		if got := sip.MessageLabel([]byte(tt.in)); got != tt.want {
			t.Errorf("MessageLabel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
