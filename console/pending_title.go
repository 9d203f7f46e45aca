package console

import (
	"context"
	"strconv"

	"github.com/ewp-go/ewp/audit"
)

// maxTitleCount is the most pending decisions the page title counts; more
// show as "99+", so the count costs one bounded read per page.
const maxTitleCount = 99

// pendingTitle is the pending count a signed-in page's title starts with,
// "(3) " (an operator sees it on the tab and in the window list without
// opening the inbox); "" when nothing waits, there is no decision log, or
// it cannot be read (the page itself says what failed, if it reads it).
func (c *Console) pendingTitle(ctx context.Context) string {
	if c.cfg.Log == nil {
		return ""
	}
	ds, err := c.cfg.Log.List(ctx, audit.Filter{Pending: true, Limit: maxTitleCount + 1})
	switch {
	case err != nil || len(ds) == 0:
		return ""
	case len(ds) > maxTitleCount:
		return "(" + strconv.Itoa(maxTitleCount) + "+) "
	}
	return "(" + strconv.Itoa(len(ds)) + ") "
}
