package circulation

// ResolveAmong is resolveAmong, for the tests of package circulation_test.
var ResolveAmong = resolveAmong
