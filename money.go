package stacks

import "strconv"

// FormatMoney shows cents as an amount with two decimals, as staff and patrons
// read it: 1250 is "12.50", -75 is "-0.75". Every layer formats money with it.
func FormatMoney(cents int64) string {
	return string(AppendMoney(nil, cents))
}

// AppendMoney appends FormatMoney(cents) to b (for SIP's hot path).
func AppendMoney(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	return append(b, '.', byte('0'+cents%100/10), byte('0'+cents%10))
}
