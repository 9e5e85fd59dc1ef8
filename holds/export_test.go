package holds

// The page reads Service.BranchHolds composes, for the tests of package
// holds_test.
var (
	HoldShelf = holdShelf
	PullList  = pullList
)
