package timeseries

// CounterName is the series name of c, for the tests of the package's
// API.
func CounterName(c *Counter) string { return c.name }
