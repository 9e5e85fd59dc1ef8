package web

import (
	"testing"

	"github.com/stacks-ils/stacks/staff"
)

// TestSessionKeyIsStaffs: a changed password ends the sessions whose data
// holds the account's id under staff.SessionKey, which must be where the staff
// site's sessions keep it.
func TestSessionKeyIsStaffs(t *testing.T) {
	if sessUserID != staff.SessionKey {
		t.Errorf("sessions keep the account under %q, staff.Service ends those under %q", sessUserID, staff.SessionKey)
	}
}
