package cleaner

// SetAfterUnlist installs a hook run between unlisting emptied series and
// looking at their hashes again, so a test can write exactly there.
func SetAfterUnlist(c *Cleaner, f func()) { c.afterUnlist = f }
