package console

import (
	"net/url"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolText(b bool) string { return strconv.FormatBool(b) }

func strconvQuote(s string) string { return strconv.Quote(s) }

func urlQuery(s string) string { return url.QueryEscape(s) }
