package marc

import "sort"

// MARC-8 is the character set of older MARC records (leader/09 blank): ASCII in G0
// and ANSEL (Latin letters and diacritics) in G1, with escape sequences to switch
// to other scripts. This decoder covers ASCII, ANSEL, and the Greek-symbol,
// subscript and superscript sets. Bytes in any other script (Hebrew, Cyrillic,
// Greek, Arabic, East Asian) are dropped: those records are rare in the catalogs
// Stacks imports from, and the tables are large.

// marc8Decoder converts MARC-8 field values to UTF-8. ANSEL diacritics come
// before their base letter in MARC-8 and after it in Unicode; they are moved and,
// where Unicode has a precomposed letter, composed (e + acute becomes "é"), which
// gives normalization form C for Latin text. It keeps the designated character
// sets, which last for a whole field (across subfield delimiters).
type marc8Decoder struct {
	g0, g1 byte // final byte of the designated set; 0 means the default
}

// Final bytes of the graphic sets the decoder knows.
const (
	setASCII       = 'B'
	setASCIIAlt    = 's' // technique 1 "return to ASCII"
	setANSEL       = 'E'
	setGreekSymbol = 'g'
	setSubscript   = 'b'
	setSuperscript = 'p'
)

func (d *marc8Decoder) decode(b []byte) string {
	out := make([]rune, 0, len(b))
	var marks []rune
	base := func(c rune) {
		out = append(out, compose(c, marks)...)
		marks = marks[:0]
	}
	g0, g1 := d.g0, d.g1
	if g0 == 0 {
		g0 = setASCII
	}
	if g1 == 0 {
		g1 = setANSEL
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == 0x1b:
			i += d.escape(b[i+1:])
			if d.g0 != 0 {
				g0 = d.g0
			}
			if d.g1 != 0 {
				g1 = d.g1
			}
		case c < 0x20 || c == 0x7f:
			out = append(out, marks...)
			marks = marks[:0]
			out = append(out, rune(c))
		case c == 0x20:
			base(' ')
		case c < 0x7f:
			r, combining, ok := graphic(g0, c)
			switch {
			case !ok:
			case combining:
				marks = append(marks, r)
			default:
				base(r)
			}
		case c < 0xa0:
			out = append(out, marks...)
			marks = marks[:0]
			out = append(out, c1[c-0x80])
		case c == 0xa0 || c == 0xff:
			base(0xfffd)
		default:
			r, combining, ok := graphic(g1, c&0x7f)
			switch {
			case !ok:
			case combining:
				marks = append(marks, r)
			default:
				base(r)
			}
		}
	}
	out = append(out, marks...)
	return string(out)
}

// escape applies the escape sequence after an ESC byte and returns how many
// bytes it used. An ESC that starts no known sequence is dropped on its own.
func (d *marc8Decoder) escape(rest []byte) int {
	if len(rest) == 0 {
		return 0
	}
	switch rest[0] {
	case setGreekSymbol, setSubscript, setSuperscript, setASCIIAlt:
		d.g0 = rest[0]
		return 1
	case '(', ',':
		if len(rest) < 2 {
			return len(rest)
		}
		d.g0 = rest[1]
		return 2
	case ')', '-':
		if len(rest) < 2 {
			return len(rest)
		}
		d.g1 = rest[1]
		return 2
	case '$': // multibyte sets, none of which this decoder knows
		if len(rest) < 2 {
			return len(rest)
		}
		switch rest[1] {
		case '(', ',':
			if len(rest) < 3 {
				return len(rest)
			}
			d.g0 = rest[2] | 0x80
			return 3
		case ')', '-':
			if len(rest) < 3 {
				return len(rest)
			}
			d.g1 = rest[2] | 0x80
			return 3
		}
		d.g0 = rest[1] | 0x80
		return 2
	}
	return 0
}

// graphic maps byte c (0x21-0x7E) in the set named by final. ok is false for a
// set the decoder does not know, whose bytes are dropped.
func graphic(final, c byte) (r rune, combining, ok bool) {
	switch final {
	case setASCII, setASCIIAlt:
		return rune(c), false, true
	case setANSEL:
		r = ansel[c|0x80]
		if r == 0 {
			return 0xfffd, false, true
		}
		return r, c|0x80 >= 0xe0, true
	case setGreekSymbol:
		if r, ok := greekSymbols[c]; ok {
			return r, false, true
		}
		return rune(c), false, true
	case setSubscript:
		if r, ok := subscripts[c]; ok {
			return r, false, true
		}
		return rune(c), false, true
	case setSuperscript:
		if r, ok := superscripts[c]; ok {
			return r, false, true
		}
		return rune(c), false, true
	}
	return 0, false, false
}

// c1 maps the MARC-8 bytes 0x80-0x9F: the non-sort markers and the zero-width
// joiners are the only ones in use.
var c1 = func() (t [32]rune) {
	for i := range t {
		t[i] = 0xfffd
	}
	t[0x08] = 0x0098 // non-sort begin
	t[0x09] = 0x009c // non-sort end
	t[0x0d] = 0x200d // zero width joiner
	t[0x0e] = 0x200c // zero width non-joiner
	return t
}()

// ansel is the Extended Latin (ANSEL, ANSI/NISO Z39.47) set as the Library of
// Congress maps it to Unicode. 0xE0-0xFE are combining diacritics.
var ansel = [256]rune{
	0xa1: 0x0141, // Ł
	0xa2: 0x00d8, // Ø
	0xa3: 0x0110, // Đ
	0xa4: 0x00de, // Þ
	0xa5: 0x00c6, // Æ
	0xa6: 0x0152, // Œ
	0xa7: 0x02b9, // ʹ soft sign
	0xa8: 0x00b7, // · middle dot
	0xa9: 0x266d, // ♭
	0xaa: 0x00ae, // ®
	0xab: 0x00b1, // ±
	0xac: 0x01a0, // Ơ
	0xad: 0x01af, // Ư
	0xae: 0x02bc, // ʼ alif
	0xb0: 0x02bb, // ʻ ayn
	0xb1: 0x0142, // ł
	0xb2: 0x00f8, // ø
	0xb3: 0x0111, // đ
	0xb4: 0x00fe, // þ
	0xb5: 0x00e6, // æ
	0xb6: 0x0153, // œ
	0xb7: 0x02ba, // ʺ hard sign
	0xb8: 0x0131, // ı
	0xb9: 0x00a3, // £
	0xba: 0x00f0, // ð
	0xbc: 0x01a1, // ơ
	0xbd: 0x01b0, // ư
	0xc0: 0x00b0, // °
	0xc1: 0x2113, // ℓ
	0xc2: 0x2117, // ℗
	0xc3: 0x00a9, // ©
	0xc4: 0x266f, // ♯
	0xc5: 0x00bf, // ¿
	0xc6: 0x00a1, // ¡
	0xc7: 0x00df, // ß
	0xc8: 0x20ac, // €
	0xe0: 0x0309, // hook above
	0xe1: 0x0300, // grave
	0xe2: 0x0301, // acute
	0xe3: 0x0302, // circumflex
	0xe4: 0x0303, // tilde
	0xe5: 0x0304, // macron
	0xe6: 0x0306, // breve
	0xe7: 0x0307, // dot above
	0xe8: 0x0308, // diaeresis
	0xe9: 0x030c, // caron
	0xea: 0x030a, // ring above
	0xeb: 0xfe20, // ligature, left half
	0xec: 0xfe21, // ligature, right half
	0xed: 0x0315, // comma above right
	0xee: 0x030b, // double acute
	0xef: 0x0310, // candrabindu
	0xf0: 0x0327, // cedilla
	0xf1: 0x0328, // ogonek (right hook)
	0xf2: 0x0323, // dot below
	0xf3: 0x0324, // diaeresis below
	0xf4: 0x0325, // ring below
	0xf5: 0x0333, // double low line
	0xf6: 0x0332, // low line
	0xf7: 0x0326, // comma below (left hook)
	0xf8: 0x031c, // left half ring below (right cedilla)
	0xf9: 0x032e, // breve below (upadhmaniya)
	0xfa: 0xfe22, // double tilde, left half
	0xfb: 0xfe23, // double tilde, right half
	0xfe: 0x0313, // comma above
}

var greekSymbols = map[byte]rune{'a': 0x03b1, 'b': 0x03b2, 'c': 0x03b3}

var subscripts = map[byte]rune{
	'0': 0x2080, '1': 0x2081, '2': 0x2082, '3': 0x2083, '4': 0x2084,
	'5': 0x2085, '6': 0x2086, '7': 0x2087, '8': 0x2088, '9': 0x2089,
	'+': 0x208a, '-': 0x208b, '(': 0x208d, ')': 0x208e,
}

var superscripts = map[byte]rune{
	'0': 0x2070, '1': 0x00b9, '2': 0x00b2, '3': 0x00b3, '4': 0x2074,
	'5': 0x2075, '6': 0x2076, '7': 0x2077, '8': 0x2078, '9': 0x2079,
	'+': 0x207a, '-': 0x207b, '(': 0x207d, ')': 0x207e,
}

type composeKey struct{ base, mark rune }

// combiningClass is the Unicode canonical combining class of the ANSEL marks;
// the rest of them are 230 (above).
func combiningClass(m rune) int {
	switch m {
	case 0x0315:
		return 232
	case 0x0327, 0x0328:
		return 202
	case 0x031c, 0x0323, 0x0324, 0x0325, 0x0326, 0x032e, 0x0332, 0x0333:
		return 220
	}
	return 230
}

// compose returns base followed by marks in canonical order, composed as far as
// composeTable allows, following the NFC rule that a mark cannot compose past an
// uncomposed mark of the same class.
func compose(base rune, marks []rune) []rune {
	if len(marks) == 0 {
		return []rune{base}
	}
	ms := append([]rune(nil), marks...)
	sort.SliceStable(ms, func(i, j int) bool { return combiningClass(ms[i]) < combiningClass(ms[j]) })
	cur := base
	var rest []rune
	for _, m := range ms {
		if len(rest) == 0 || combiningClass(rest[len(rest)-1]) < combiningClass(m) {
			if c, ok := composeTable[composeKey{cur, m}]; ok {
				cur = c
				continue
			}
		}
		rest = append(rest, m)
	}
	return append([]rune{cur}, rest...)
}
