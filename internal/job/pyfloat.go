package job

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// parseFloat reads a float option's value as FaceFusion does, with Python's float() (argparse's
// type = float, configparser's get_float_value): decimal digits with single underscores
// between them, an optional point and exponent, inf, infinity and nan in any case, a sign,
// whitespace around it, and any Unicode decimal digit. strconv.ParseFloat differs both ways (it
// takes hexadecimal, "0x1p-1", and refuses " 1" and "+nan"), so every float flag and
// facefusion.ini key goes through here: a value FaceFusion accepts is accepted with the same
// number, and one it refuses is refused. The ranges are the options' own checks. flag names
// the option in the error, as --flag.
func parseFloat(flag, s string) (float64, error) {
	bad := errors.New("--" + flag + ": " + safefs.Excerpt(s) + " is not a number (a decimal such as 0.5, as FaceFusion reads it)")
	t, ok := pyASCII(s)
	if !ok {
		return 0, bad
	}
	t = strings.Trim(t, " \t\n\v\f\r") // Python's ASCII whitespace, after pyASCII's mapping
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, bad
	}
	neg := strings.HasPrefix(t, "-")
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	if !pyDecimal(body) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // Python's 1e400 is inf, and so is Go's
		return 0, bad
	}
	return f, nil
}

// pyASCII is s as CPython hands it to its float parser: each Unicode whitespace character
// outside ASCII a space, each Unicode decimal digit its ASCII digit; false for any other
// character outside ASCII, which no float holds.
func pyASCII(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + digitValue(r)))
		default:
			return "", false
		}
	}
	return b.String(), true
}

// digitValue is a Unicode decimal digit's value. Unicode lays every set of decimal digits out
// as a run of ten code points from 0 to 9, sets side by side where they touch, so the value is
// the offset into the run of digits before r, modulo ten.
func digitValue(r rune) int {
	n := 0
	for unicode.IsDigit(r - rune(n) - 1) {
		n++
	}
	return n % 10
}

// pyDecimal reports whether s (no sign, no whitespace) is Python's floatnumber: digitpart "."
// [digitpart], "." digitpart or digitpart, then optionally "e" or "E", a sign and a digitpart,
// where a digitpart is ASCII digits with single underscores between them.
func pyDecimal(s string) bool {
	digitpart := func(i int) int { // the end of the digitpart at i, or i when there is none
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			if j+1 < len(s) && s[j] == '_' && s[j+1] >= '0' && s[j+1] <= '9' {
				j++
			}
		}
		return j
	}
	i := digitpart(0)
	whole := i > 0
	if i < len(s) && s[i] == '.' {
		j := digitpart(i + 1)
		if !whole && j == i+1 {
			return false // "." alone
		}
		i = j
	} else if !whole {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitpart(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}
