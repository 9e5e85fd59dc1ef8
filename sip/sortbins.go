package sip

import (
	"fmt"
	"slices"
	"strings"
)

// Outcome is where a checked-in item goes next: what an automated sorter routes on.
type Outcome string

// Checkin outcomes, with the alert type (CV) each sends.
const (
	// OutcomeShelf: back to the shelf here. No alert.
	OutcomeShelf Outcome = "shelf"
	// OutcomeHold: it fills a hold picked up here (CV 01).
	OutcomeHold Outcome = "hold"
	// OutcomeRemoteHold: it fills a hold picked up at another branch (CV 02).
	OutcomeRemoteHold Outcome = "remote-hold"
	// OutcomeTransfer: it goes home to another branch (CV 04).
	OutcomeTransfer Outcome = "transfer"
	// OutcomeException: staff must look at it: unknown barcode, withdrawn, an
	// error (CV 99).
	OutcomeException Outcome = "exception"
)

var outcomes = []Outcome{OutcomeShelf, OutcomeHold, OutcomeRemoteHold, OutcomeTransfer, OutcomeException}

// alertType is the CV field for an outcome; "" for none.
func (o Outcome) alertType() string {
	switch o {
	case OutcomeHold:
		return "01"
	case OutcomeRemoteHold:
		return "02"
	case OutcomeTransfer:
		return "04"
	case OutcomeException:
		return "99"
	}
	return ""
}

// SortBins maps checkin outcomes to a sorter's bins, sent as the sort bin field (CL)
// of the checkin response. An outcome without a bin sends no CL field, except a
// remote hold, which falls back to the transfer bin: both travel to another branch.
type SortBins map[Outcome]string

// ParseSortBins reads a mapping written as "hold=1,remote-hold=2,transfer=2,shelf=3,
// exception=4" (the --sip-sort-bins flag). Outcomes are shelf, hold, remote-hold,
// transfer and exception; a bin is any text without ",", "=" or "|".
func ParseSortBins(s string) (SortBins, error) {
	bins := SortBins{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" || !validText(v, 32) {
			return nil, fmt.Errorf("sort bins %q: write each as outcome=bin, e.g. hold=1,transfer=2,shelf=3", s)
		}
		o := Outcome(strings.ToLower(k))
		if !slices.Contains(outcomes, o) {
			return nil, fmt.Errorf("sort bins %q: unknown outcome %q; the outcomes are shelf, hold, remote-hold, transfer and exception", s, k)
		}
		bins[o] = v
	}
	return bins, nil
}

// Bin returns the bin for an outcome, "" for none.
func (b SortBins) Bin(o Outcome) string {
	if bin, ok := b[o]; ok {
		return bin
	}
	if o == OutcomeRemoteHold {
		return b[OutcomeTransfer]
	}
	return ""
}

// String writes the mapping back in the flag's form, in a fixed order.
func (b SortBins) String() string {
	var parts []string
	for _, o := range outcomes {
		if bin, ok := b[o]; ok {
			parts = append(parts, string(o)+"="+bin)
		}
	}
	return strings.Join(parts, ",")
}
