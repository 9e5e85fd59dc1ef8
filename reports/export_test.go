package reports

import "testing"

// SkipPlanCheck runs tb's reports on PostgreSQL without the plan check, so that
// a test proves what the report role holds by itself.
func SkipPlanCheck(tb testing.TB) {
	checkPlans = false
	tb.Cleanup(func() { checkPlans = true })
}
