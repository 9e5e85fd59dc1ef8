package web

// ParseMoney and FormatMoney expose the amount parser of the pay, waive and
// preferences forms to the fuzz test.
var (
	ParseMoney  = parseMoney
	FormatMoney = formatMoney
)
