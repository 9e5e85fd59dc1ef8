package stacks

// Actor is who does something: a staff account at the desk, or a SIP terminal. Every
// write that the audit log records names one.
type Actor struct {
	// StaffID is the staff account's id; 0 for a SIP terminal or the system.
	StaffID int64
	// Name is what the audit log shows: a username, "sip:kiosk", "system".
	Name string
	// BranchID is the branch the actor works at: checkouts and checkins happen there.
	BranchID int64
}

// System is the actor for work the program does by itself (migrations, the demo).
var System = Actor{Name: "system"}
