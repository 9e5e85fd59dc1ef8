package reports

import "testing"

// SkipPlanCheck runs tb's reports on PostgreSQL without the plan check, so that
// a test proves what the report role holds by itself.
func SkipPlanCheck(tb testing.TB) {
	checkPlans = false
	tb.Cleanup(func() { checkPlans = true })
}

// ScanStatements is how many statements scanSQL finds in q.
func ScanStatements(q string) (int, error) {
	s, err := scanSQL(q)
	return s.statements, err
}
