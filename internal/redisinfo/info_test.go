package redisinfo

import "testing"

func TestField(t *testing.T) {
	const info = "# Server\r\nredis_version:7.0.15\r\nprocess_id:4242\r\nrun_id:ab:cd\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n"
	for _, tc := range []struct{ name, want string }{
		{"process_id", "4242"},
		{"redis_version", "7.0.15"},
		{"run_id", "ab:cd"},      // a value may hold a colon
		{"cluster_enabled", "0"}, // the last line, after a section header
		{"id", ""},               // a suffix of another name is not that name
		{"missing", ""},
		{"# Server", ""},
	} {
		if got := Field(info, tc.name); got != tc.want {
			t.Errorf("Field(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
