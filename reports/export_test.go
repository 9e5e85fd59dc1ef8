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

// The transaction-taking steps of Service, for the tests that compose them
// inside one transaction of their own.
var (
	StartStocktake     = startStocktake
	StocktakeLocations = stocktakeLocations
	Scan               = scan
	Results            = results
)
