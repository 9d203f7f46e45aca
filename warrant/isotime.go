package warrant

// EWP §3 defines a "parseable instant" by reference to CPython 3.11's
// datetime.fromisoformat applied to s.strip().replace("Z", "+00:00").
// This file ports the C implementation's behaviour (Modules/_datetimemodule.c
// in 3.11.7, the oracle), quirks included, as a byte scanner: the reference
// accepts inputs RFC 3339 would refuse, and disagreeing on them would change
// which records are available at T.
//
// The C parser works on a NUL-terminated UTF-8 buffer and sometimes reads
// past the end of the field it is parsing; isoAt() reproduces that by reading
// 0 past the end, which is also why an embedded NUL behaves like the end of
// the string in some places and not in others.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Instant is a UTC instant in microseconds since 0001-01-01T00:00:00Z.
// After applying an offset, an instant may fall slightly outside years
// 1..9999; that is fine (int64).
type Instant int64

const (
	isoUsPerSec = int64(1_000_000)
	isoUsPerDay = 86_400 * isoUsPerSec
	// isoMaxOrdinal is the proleptic Gregorian ordinal of 9999-12-31, the
	// last day Python's datetime can represent.
	isoMaxOrdinal = 3_652_059
	// isoZBufLen sizes the stack buffer used to expand 'Z'; longer inputs
	// with a 'Z' are rare and take one allocation.
	isoZBufLen = 64
)

// Sub returns t-u in microseconds.
func (t Instant) Sub(u Instant) int64 { return int64(t - u) }

// String formats t as RFC 3339 UTC with microseconds, for diagnostics.
// Instants outside years 1..9999 (reachable through offsets) still print,
// with their proleptic Gregorian year.
func (t Instant) String() string {
	days, us := isoFloorDiv(int64(t), isoUsPerDay)
	y, m, d := isoCivil(days)
	sec, frac := us/isoUsPerSec, us%isoUsPerSec
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
		y, m, d, sec/3600, sec/60%60, sec%60, frac)
}

// ParseInstant reports whether s is a parseable instant and returns it.
// Values without an offset are taken as UTC.
func ParseInstant(s string) (Instant, bool) {
	if t, ok := isoQuick(s); ok {
		return t, true
	}
	// Python sees decoded text; bytes that are not UTF-8 have no str
	// reading, so they are never an instant. A lone surrogate (which JSON
	// text can carry, and pyjson keeps as WTF-8) is a character to Python,
	// usable as the date/time separator.
	if !isoValidWTF8(s) {
		return 0, false
	}
	s = isoStrip(s)
	if strings.IndexByte(s, 'Z') < 0 {
		return isoParse(s)
	}
	// Every 'Z' becomes "+00:00" before parsing, which shifts the positions
	// CPython uses to find the separator, so the text is really rewritten.
	var buf [isoZBufLen]byte
	return isoParse(isoExpandZ(buf[:0], s))
}

// isoQuick reads the shape nearly every timestamp has, a valid
// YYYY-MM-DDTHH:MM:SS followed by nothing, Z or ±HH:MM, in one pass. It
// reports false for everything else, valid or not, which the full port
// then reads; the two agree wherever isoQuick answers (FuzzIsoQuick).
func isoQuick(s string) (Instant, bool) {
	n := len(s)
	if (n != 19 && n != 20 && n != 25) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	yc, yy, mo, d := isoQuick2(s, 0), isoQuick2(s, 2), isoQuick2(s, 5), isoQuick2(s, 8)
	h, mi, sec := isoQuick2(s, 11), isoQuick2(s, 14), isoQuick2(s, 17)
	if yc < 0 || yy < 0 || mo < 0 || d < 0 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	var off int64
	switch n {
	case 20:
		if s[19] != 'Z' {
			return 0, false
		}
	case 25:
		oh, om := isoQuick2(s, 20), isoQuick2(s, 23)
		if (s[19] != '+' && s[19] != '-') || s[22] != ':' || oh < 0 || oh > 23 || om < 0 || om > 59 {
			return 0, false
		}
		if off = int64(oh*3600+om*60) * isoUsPerSec; s[19] == '-' {
			off = -off
		}
	}
	ord, ok := isoCalendarOrdinal(yc*100+yy, mo, d)
	if !ok {
		return 0, false
	}
	clock := int64(h*3600+mi*60+sec) * isoUsPerSec
	return Instant(int64(ord-1)*isoUsPerDay + clock - off), true
}

// isoQuick2 reads the two digits at s[i:], or returns a negative number.
func isoQuick2(s string, i int) int {
	a, b := int(s[i])-'0', int(s[i+1])-'0'
	if uint(a) > 9 || uint(b) > 9 {
		return -1000
	}
	return a*10 + b
}

// isoExpandZ appends s to dst with every 'Z' replaced by "+00:00"; append
// moves to the heap only for inputs too long for the caller's buffer.
func isoExpandZ(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 'Z')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(append(dst, s[:i]...), "+00:00"...)
		s = s[i+1:]
	}
}

// isoStrip removes what Python's str.strip() removes: str.isspace()
// characters, which include \x1c-\x1f that strings.TrimSpace keeps.
func isoStrip(s string) string {
	for len(s) > 0 {
		r, n := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s)
		}
		if !isoIsSpace(r) {
			break
		}
		s = s[n:]
	}
	for len(s) > 0 {
		r, n := rune(s[len(s)-1]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeLastRuneInString(s)
		}
		if !isoIsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// isoIsSpace is Python's str.isspace() for one code point (verified against
// python3 over all of Unicode).
func isoIsSpace(r rune) bool {
	switch {
	case r <= ' ':
		return r == ' ' || (r >= '\t' && r <= '\r') || (r >= 0x1c && r <= 0x1f)
	case r < 0x85:
		return false
	case r >= 0x2000 && r <= 0x200a:
		return true
	}
	switch r {
	case 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return false
}

// isoText lets one scanner serve both the caller's string (no copy) and the
// Z-expanded stack buffer.
type isoText interface{ ~string | ~[]byte }

// isoAt reads s like a NUL-terminated C buffer: past the end is NUL.
func isoAt[T isoText](s T, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isoIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// isoDigits reads n ASCII digits at i (CPython's parse_digits: ASCII only,
// no sign, fixed width) and returns the value and the next index.
func isoDigits[T isoText](s T, i, n int) (v, next int, ok bool) {
	if i+n > len(s) {
		return 0, i, false // would reach the NUL terminator
	}
	for _, c := range []byte(s[i : i+n]) {
		if !isoIsDigit(c) {
			return 0, i, false
		}
		v = v*10 + int(c-'0')
	}
	return v, i + n, true
}

// isoParse is datetime_fromisoformat on the already stripped and
// Z-expanded text, converted to a UTC instant.
func isoParse[T isoText](s T) (Instant, bool) {
	// CPython refuses fewer than 7 code points up front; a date needs at
	// least 7 ASCII bytes, so counting bytes decides the same cases.
	if len(s) < 7 {
		return 0, false
	}
	sep := isoSeparator(s)
	if sep < 0 {
		// Only "YYYY-Www-" yields -1; its date can never parse.
		return 0, false
	}
	ord, ok := isoDate(s, sep)
	if !ok {
		return 0, false
	}
	t := Instant(int64(ord-1) * isoUsPerDay)
	if len(s) <= sep {
		return t, true // date only: midnight, no offset
	}
	// The separator is any one character; CPython skips it by the length
	// its UTF-8 lead byte announces.
	clock, off, ok := isoTime(s, sep+isoSepLen(s[sep]))
	if !ok {
		return 0, false
	}
	return t + Instant(clock-off), true
}

// isoSepLen mirrors CPython's lead-byte switch when skipping the separator.
func isoSepLen(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c&0xf0 == 0xe0:
		return 3
	case c&0xf0 == 0xf0:
		return 4
	}
	return 2
}

// isoSeparator ports _find_isoformat_datetime_separator: it guesses the
// date's length (7, 8 or 10 bytes) from bytes 4, 5, 8 and 10 because the
// separator itself may be any character, digits included. len(s) >= 7.
func isoSeparator[T isoText](s T) int {
	n := len(s)
	if n == 7 {
		return 7
	}
	switch {
	case s[4] == '-' && s[5] == 'W':
		return isoWeekSepExt(s)
	case s[4] == '-':
		return 10 // YYYY-MM-DD
	case s[4] == 'W':
		return isoWeekSepBasic(s)
	}
	return 8 // YYYYMMDD
}

// isoWeekSepExt handles YYYY-Www (8) and YYYY-Www-D (10); with
// YYYY-Www-## CPython bets on a '-' separator at 8 rather than a digit at 10.
func isoWeekSepExt[T isoText](s T) int {
	n := len(s)
	if n <= 8 || s[8] != '-' {
		return 8
	}
	if n == 9 {
		return -1
	}
	if n > 10 && isoIsDigit(s[10]) {
		return 8
	}
	return 10
}

// isoWeekSepBasic handles YYYYWww (7) and YYYYWwwD (8): it counts the
// digits from byte 7 on and, past 8, picks by parity (even end: 7).
func isoWeekSepBasic[T isoText](s T) int {
	idx := 7
	for idx < len(s) && isoIsDigit(s[idx]) {
		idx++
	}
	if idx < 9 {
		return idx
	}
	if idx%2 == 0 {
		return 7
	}
	return 8
}

// isoDate ports parse_isoformat_date and returns the day's ordinal
// (0001-01-01 is 1). It reads a fixed pattern from the start; limit (the
// separator position) only decides whether a week date has a weekday.
func isoDate[T isoText](s T, limit int) (int, bool) {
	year, i, ok := isoDigits(s, 0, 4)
	if !ok {
		return 0, false
	}
	ext := isoAt(s, i) == '-'
	if ext {
		i++
	}
	if isoAt(s, i) == 'W' {
		return isoWeekDate(s, year, i+1, limit, ext)
	}
	month, i, ok := isoDigits(s, i, 2)
	if !ok {
		return 0, false
	}
	if ext {
		if isoAt(s, i) != '-' {
			return 0, false
		}
		i++
	}
	day, _, ok := isoDigits(s, i, 2)
	if !ok {
		return 0, false
	}
	return isoCalendarOrdinal(year, month, day)
}

// isoWeekDate reads "ww[-]d" at i; the weekday defaults to Monday when
// the date ends at the week number.
func isoWeekDate[T isoText](s T, year, i, limit int, ext bool) (int, bool) {
	week, i, ok := isoDigits(s, i, 2)
	if !ok {
		return 0, false
	}
	wd := 1
	if i < limit {
		if ext {
			if isoAt(s, i) != '-' {
				return 0, false
			}
			i++
		}
		if wd, _, ok = isoDigits(s, i, 1); !ok {
			return 0, false
		}
	}
	return isoWeekOrdinal(year, week, wd)
}

// isoTime ports parse_isoformat_time over s[start:] and returns the time
// of day and the UTC offset, both in microseconds.
func isoTime[T isoText](s T, start int) (clock, off int64, ok bool) {
	end := len(s)
	if start >= end {
		return 0, 0, false // nothing after the separator: no hour
	}
	// The offset starts at the first sign. No 'Z' can be left after the
	// expansion, so CPython's 'Z' branch is unreachable here.
	tz := end
	for i := start; i < end; i++ {
		if c := s[i]; c == '+' || c == '-' {
			tz = i
			break
		}
	}
	h, m, sec, us, rv := isoClock(s, start, tz)
	if rv < 0 || h > 23 || m > 59 || sec > 59 {
		return 0, 0, false
	}
	clock = (int64(h*3600+m*60+sec))*isoUsPerSec + int64(us)
	if tz == end {
		// No offset: trailing text after the clock is an error here, while
		// with an offset the same leftover is silently ignored.
		return clock, 0, rv == 0
	}
	off, ok = isoOffset(s, tz, end)
	return clock, off, ok
}

// isoOffset reads "±HH[[:]MM[[:]SS[.f]]]" at tz with the same clock
// grammar. Minutes and seconds are not range-checked (+01:99 is 2h39m);
// only the total must lie strictly within ±24h.
func isoOffset[T isoText](s T, tz, end int) (int64, bool) {
	h, m, sec, us, rv := isoClock(s, tz+1, end)
	if rv != 0 {
		return 0, false
	}
	secs := int64(h*3600 + m*60 + sec)
	if secs == 0 {
		// CPython returns UTC when the whole seconds are zero, dropping
		// any microseconds: "+00:00:00.5" is +00:00.
		return 0, true
	}
	off := secs*isoUsPerSec + int64(us)
	if isoAt(s, tz) == '-' {
		off = -off
	}
	return off, off > -isoUsPerDay && off < isoUsPerDay
}

// isoClock ports parse_hh_mm_ss_ff over s[p:end]: HH, then MM and SS
// with either all ':' or none, then a fraction. rv is 0 when the field
// ends cleanly, 1 when something is left over, -1 on error.
func isoClock[T isoText](s T, p, end int) (h, m, sec, us, rv int) {
	var vals [3]int
	sepd := true
	for i := 0; i < 3; i++ {
		v, q, ok := isoDigits(s, p, 2)
		if !ok {
			return 0, 0, 0, 0, -1
		}
		vals[i] = v
		c := isoAt(s, q)
		p = q + 1
		if i == 0 {
			sepd = c == ':'
		}
		if p >= end {
			// The field is used up: it ends cleanly only if the byte after
			// the digits is NUL, i.e. the end of the buffer or a real NUL.
			return vals[0], vals[1], vals[2], 0, isoNulFlag(c)
		}
		if sepd && c == ':' {
			continue
		}
		if c == '.' || c == ',' {
			break
		}
		if sepd {
			return 0, 0, 0, 0, -1
		}
		p-- // basic format: the next component starts right here
	}
	// A fraction follows ".", ",", a third ":" or, in basic format, the
	// seconds directly; it may even follow the hour ("12.5").
	us, rv = isoFraction(s, p, end)
	return vals[0], vals[1], vals[2], us, rv
}

// isoFraction reads up to six digits (all of them required when the field
// is that long), scales to microseconds and skips further digits.
func isoFraction[T isoText](s T, p, end int) (us, rv int) {
	n := min(end-p, 6)
	v, q, ok := isoDigits(s, p, n)
	if !ok {
		return 0, -1
	}
	for k := n; k < 6; k++ {
		v *= 10
	}
	for isoIsDigit(isoAt(s, q)) {
		q++
	}
	return v, isoNulFlag(isoAt(s, q))
}

// isoNulFlag is CPython's "c != '\0'" result: 1 unless c is NUL.
func isoNulFlag(c byte) int {
	if c == 0 {
		return 0
	}
	return 1
}

func isoLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// isoDaysBefore is indexed by month 1..12 for a common year.
var isoDaysBefore = [13]int{0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}

func isoDaysInMonth(y, m int) int {
	if m == 2 && isoLeap(y) {
		return 29
	}
	return [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
}

// isoOrdinalOf returns the proleptic Gregorian ordinal of a valid date.
func isoOrdinalOf(y, m, d int) int {
	py := y - 1
	o := py*365 + py/4 - py/100 + py/400 + isoDaysBefore[m] + d
	if m > 2 && isoLeap(y) {
		o++
	}
	return o
}

// isoCalendarOrdinal validates a calendar date as datetime() does.
func isoCalendarOrdinal(y, m, d int) (int, bool) {
	if y < 1 || m < 1 || m > 12 || d < 1 || d > isoDaysInMonth(y, m) {
		return 0, false
	}
	return isoOrdinalOf(y, m, d), true
}

// isoWeekOrdinal ports iso_to_ymd plus datetime()'s year check. ISO year
// 0 is refused: in CPython every such date lands before 0001-01-01 and
// fails with "month must be in 1..12".
func isoWeekOrdinal(y, w, d int) (int, bool) {
	if y < 1 || w < 1 || w > 53 || d < 1 || d > 7 {
		return 0, false
	}
	jan1 := isoOrdinalOf(y, 1, 1)
	wd := (jan1 + 6) % 7 // 0 is Monday
	// Week 53 exists when the year starts on a Thursday, or on a
	// Wednesday in a leap year.
	if w == 53 && wd != 3 && !(wd == 2 && isoLeap(y)) {
		return 0, false
	}
	monday := jan1 - wd
	if wd > 3 {
		monday += 7
	}
	o := monday + (w-1)*7 + d - 1
	return o, o <= isoMaxOrdinal // late weeks of 9999 spill into year 10000
}

// isoFloorDiv divides rounding toward minus infinity, keeping 0 <= r < d.
func isoFloorDiv(n, d int64) (q, r int64) {
	q, r = n/d, n%d
	if r < 0 {
		q--
		r += d
	}
	return q, r
}

// isoCivil converts days since 0001-01-01 to a proleptic Gregorian
// date for any int64 input (used only for printing).
func isoCivil(days int64) (y, m, d int64) {
	// Shift to an era starting 0000-03-01 so leap days end each cycle.
	z := days + 306
	era, doe := isoFloorDiv(z, 146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = era*400 + yoe
	if m <= 2 {
		y++
	}
	return y, m, d
}

// isoValidWTF8 is utf8.ValidString that also admits the three-byte
// encoding of a lone surrogate.
func isoValidWTF8(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		if len(s)-i >= 3 && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}
