package echov5

import (
	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/adapter"
)

// markable puts a Writer in the chain of c.Response(), where
// timeseries.Skip(c.Response()) finds it through Unwrap. It goes under
// the *echo.Response, so that c.Response() is still the Response code
// may assert it to be; only when no Response can be reached (a writer
// without Unwrap set by an outer middleware) does it go on top.
func markable(c *echo.Context) (*echo.Response, *adapter.Writer) {
	resp, err := echo.UnwrapResponse(c.Response())
	if err != nil {
		sw := adapter.NewWriter(c.Response())
		c.SetResponse(sw)
		return nil, sw
	}
	sw := adapter.NewWriter(resp.ResponseWriter)
	resp.ResponseWriter = sw
	return resp, sw
}

// unmark takes sw out of the chain markable put it in, and reports
// whether the request was marked with timeseries.Skip; the caller
// releases sw.
func unmark(c *echo.Context, resp *echo.Response, sw *adapter.Writer) (skipped bool) {
	if resp != nil {
		resp.ResponseWriter = sw.ResponseWriter
	} else {
		c.SetResponse(sw.ResponseWriter)
	}
	return sw.Skipped()
}
