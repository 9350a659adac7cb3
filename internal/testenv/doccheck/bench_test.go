package doccheck

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBenchmarksSummarizeTheReport: the table BENCHMARKS.md opens with
// gives, for every variant, the ratios of the make bench run recorded in
// docs/bench-report.md, and names that run's date, so that a new run
// without a new summary fails here.
func TestBenchmarksSummarizeTheReport(t *testing.T) {
	report := readRepoFile(t, "docs/bench-report.md")
	made := regexp.MustCompile("Made by `make bench` on (\\d{4}-\\d\\d-\\d\\d) (\\d\\d:\\d\\d) UTC").FindStringSubmatch(report)
	if made == nil {
		t.Fatal("docs/bench-report.md does not say when make bench made it")
	}
	summary := readRepoFile(t, "BENCHMARKS.md")
	_, latest, _ := strings.Cut(summary, "\n## Latest results\n")
	latest, _, _ = strings.Cut(latest, "\n## ")
	if when := made[1] + " at " + made[2] + " UTC"; !strings.Contains(latest, when) {
		t.Errorf("BENCHMARKS.md's latest results do not name the run of docs/bench-report.md (%s)", when)
	}
	want := tableColumns(t, report, "variant", "× bare (throughput)", "× bare (CPU/req)")
	got := tableColumns(t, latest, "variant", "× bare throughput", "× bare CPU per request")
	if len(want) == 0 || len(got) == 0 {
		t.Fatalf("found %d variants in the report and %d in BENCHMARKS.md", len(want), len(got))
	}
	for v, w := range want {
		if referenceServers[v] {
			continue
		}
		g, ok := got[v]
		if !ok {
			t.Errorf("BENCHMARKS.md's table has no row for %s", v)
			continue
		}
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("%s: BENCHMARKS.md says %s, the report %s", v, g[i], w[i])
			}
		}
	}
	for v := range got {
		if _, ok := want[v]; !ok {
			t.Errorf("BENCHMARKS.md's table has %s, which the report does not", v)
		}
	}
}

// referenceServers are what the ratios are taken against: 1.00 each.
var referenceServers = map[string]bool{"bare": true, "bare-v5": true, "bare-http": true}

// tableColumns finds the first Markdown table in text whose header has
// every one of cols and returns, by the first column's first word, the
// other columns' cells, bold marks removed.
func tableColumns(t *testing.T, text string, cols ...string) map[string][]string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		idx := headerIndexes(l, cols)
		if idx == nil {
			continue
		}
		out := map[string][]string{}
		for _, row := range lines[i+2:] {
			if !strings.HasPrefix(row, "|") {
				break
			}
			cells := splitRow(row)
			if len(cells) <= slices.Max(idx) {
				t.Fatalf("short row %q", row)
			}
			var vals []string
			for _, j := range idx[1:] {
				vals = append(vals, cells[j])
			}
			out[firstWord(cells[idx[0]])] = vals
		}
		return out
	}
	t.Fatalf("no table with the columns %q", cols)
	return nil
}

func headerIndexes(line string, cols []string) []int {
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	cells := splitRow(line)
	var idx []int
	for _, c := range cols {
		j := -1
		for k, cell := range cells {
			if cell == c {
				j = k
				break
			}
		}
		if j < 0 {
			return nil
		}
		idx = append(idx, j)
	}
	return idx
}

func splitRow(row string) []string {
	cells := strings.Split(strings.Trim(row, "|"), "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "**", ""))
	}
	return cells
}
