package circulation

// The transaction-taking functions the services compose, for the tests of
// package circulation_test.
var (
	ResolveAmong          = resolveAmong
	CheckinBatch          = checkinBatch
	CheckinsToAcknowledge = checkinsToAcknowledge
	ListTransfers         = listTransfers
	FindTransfer          = findTransfer
	FindItemTransfer      = findItemTransfer
	ListRules             = listRules
	FindRule              = findRule
	DeleteRule            = deleteRule
)
