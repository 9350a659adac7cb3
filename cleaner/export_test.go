package cleaner

// Test hooks. Set them on a Cleaner made with Config.Manual, before Start.

// SetBeforeUnlist installs a hook run between the trims that left hashes
// empty and their unlisting, so a test can write exactly there.
func SetBeforeUnlist(c *Cleaner, f func()) { c.beforeUnlist = f }

// SetBeforePass installs a hook run at the start of every pass.
func SetBeforePass(c *Cleaner, f func()) { c.beforePass = f }

// SetAfterPass installs a hook run after every background pass.
func SetAfterPass(c *Cleaner, f func(Stats, error)) { c.afterPass = f }

// SetPerKey makes c trim with one script call per series, as it does
// where the node script does not compile (Redis before 7, an embedded
// server).
func SetPerKey(c *Cleaner) { c.perKey = true }
