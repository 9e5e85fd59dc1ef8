package db

// CompareVersions exposes compareVersions to the external tests.
var CompareVersions = compareVersions
