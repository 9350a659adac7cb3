package redistest

import (
	"slices"
	"testing"
)

func TestParseNodes(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		addr      string
		master    bool
		ranges    [][2]int
		migrating []int
	}{
		{"master with ranges",
			"e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460 6000",
			"127.0.0.1:30001", true, [][2]int{{0, 5460}, {6000, 6000}}, nil},
		{"replica, hostname announced",
			"a1b2 127.0.0.1:30004@40004,node-4 slave e7d1 0 1426238317239 4 connected",
			"127.0.0.1:30004", false, nil, nil},
		{"migrating and importing",
			"e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-10 [11->-f00] [12-<-f00]",
			"127.0.0.1:30001", true, [][2]int{{0, 10}}, []int{11, 12}},
		{"failed master",
			"c3d4 127.0.0.1:30002@40002 master,fail - 1 1 2 disconnected",
			"127.0.0.1:30002", true, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := parseNodes(tt.line)
			if err != nil || len(n) != 1 {
				t.Fatalf("parseNodes: %v, %v", n, err)
			}
			got := n[0]
			if got.addr != tt.addr || got.has("master") != tt.master ||
				!slices.Equal(got.ranges, tt.ranges) || !slices.Equal(got.migrating, tt.migrating) {
				t.Fatalf("got %+v", got)
			}
		})
	}
}
