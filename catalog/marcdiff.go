package catalog

import (
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// FieldChange is one line of a MARC diff, in the mnemonic syntax: a field (or
// the leader) added, removed, or changed (Old to New, the same tag at the same
// place).
type FieldChange struct {
	Kind     string // "added", "removed", "changed" or "same"
	Old, New string
}

// MARCDiff is what a save changes in a record's MARC, field by field, in record
// order, the unchanged fields included (Kind "same").
type MARCDiff []FieldChange

// DiffMARC compares two versions of a record line by line (the leader, then a
// line a field; the leader's lengths are not compared): the longest common run of unchanged lines is kept, and a
// removed line followed by an added one with the same tag is a change.
func DiffMARC(old, new *marc.Record) MARCDiff {
	a, b := marc.FormatLines(old), marc.FormatLines(new)
	// The leader's lengths (record length, base address) follow the fields:
	// a leader that differs only there is the same.
	if old != nil && new != nil && sameLeader(old.Leader, new.Leader) {
		a[0] = b[0]
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var d MARCDiff
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			d = append(d, FieldChange{Kind: "same", Old: a[i], New: b[j]})
			i++
			j++
		case i < len(a) && j < len(b) && lineTag(a[i]) == lineTag(b[j]) && lcs[i+1][j+1] == lcs[i][j]:
			d = append(d, FieldChange{Kind: "changed", Old: a[i], New: b[j]})
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			d = append(d, FieldChange{Kind: "added", New: b[j]})
			j++
		default:
			d = append(d, FieldChange{Kind: "removed", Old: a[i]})
			i++
		}
	}
	return d
}

func sameLeader(a, b string) bool {
	return len(a) == 24 && len(b) == 24 && a[5:12] == b[5:12] && a[17:] == b[17:]
}

// lineTag is a line's tag ("LDR" for the leader).
func lineTag(line string) string {
	if len(line) < 4 {
		return line
	}
	return line[1:4]
}

// Changed reports whether the diff changes anything.
func (d MARCDiff) Changed() bool {
	for _, c := range d {
		if c.Kind != "same" {
			return true
		}
	}
	return false
}

// Summary says which fields were added, removed and changed, by tag, for the
// audit log: "added 500; removed 700; changed 245".
func (d MARCDiff) Summary() string {
	by := map[string][]string{}
	for _, c := range d {
		if c.Kind == "same" {
			continue
		}
		line := c.New
		if c.Kind == "removed" {
			line = c.Old
		}
		by[c.Kind] = append(by[c.Kind], lineTag(line))
	}
	var parts []string
	for _, k := range []string{"added", "removed", "changed"} {
		if len(by[k]) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k, strings.Join(by[k], ", ")))
		}
	}
	if len(parts) == 0 {
		return "no fields changed"
	}
	return strings.Join(parts, "; ")
}
