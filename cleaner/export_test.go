package cleaner

// SetBeforeUnlist installs a hook run between the trims that left hashes
// empty and their unlisting, so a test can write exactly there.
func SetBeforeUnlist(c *Cleaner, f func()) { c.beforeUnlist = f }
