// Package plural writes counts in English: "1 stretch", "2 stretches".
// A count shown to a person reads wrong as "1 uses"; every count the
// console and the command lines print goes through Count.
package plural

import "strconv"

// Count is n followed by one (when n is 1) or many.
func Count[N ~int | ~int64](n N, one, many string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Word(n, one, many)
}

// Word is one when n is 1 and many otherwise (0 takes the plural:
// "0 decisions").
func Word[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
