package bench

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// goBenchCPU is the "cpu:" line of `go test -bench` output, "" if none.
func goBenchCPU(out string) string {
	for line := range strings.Lines(out) {
		if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
			return strings.TrimSpace(cpu)
		}
	}
	return ""
}

// GoBench is one benchmark's result: the median of its runs.
type GoBench struct {
	Pkg, Name   string // Name without the -GOMAXPROCS suffix
	Procs       int
	NsPerOp     float64
	BytesPerOp  float64
	AllocsPerOp float64
	Runs        int
}

// ParseGoBench reads `go test -bench -benchmem` output, in the order the
// benchmarks first appear, each the median of its runs.
func ParseGoBench(out string) []GoBench {
	type key struct{ pkg, name string }
	samples := map[key][][3]float64{}
	procs := map[key]int{}
	var order []key
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var s [3]float64
		found := false
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				s[0], found = v, true
			case "B/op":
				s[1] = v
			case "allocs/op":
				s[2] = v
			}
		}
		if !found {
			continue
		}
		k := key{pkg, m[1]}
		if _, ok := samples[k]; !ok {
			order = append(order, k)
		}
		samples[k] = append(samples[k], s)
		procs[k], _ = strconv.Atoi(m[2])
	}
	var out2 []GoBench
	for _, k := range order {
		col := func(i int) float64 {
			var xs []float64
			for _, s := range samples[k] {
				xs = append(xs, s[i])
			}
			return median(xs)
		}
		out2 = append(out2, GoBench{Pkg: k.pkg, Name: k.name, Procs: procs[k], NsPerOp: col(0), BytesPerOp: col(1),
			AllocsPerOp: col(2), Runs: len(samples[k])})
	}
	return out2
}

// GoBenchTable lists benchmarks; a sub-benchmark with a sibling named
// "bare" also shows its difference over bare.
func GoBenchTable(bs []GoBench) *table {
	t := &table{header: []string{"package", "benchmark", "ns/op", "B/op", "allocs/op", "over bare"}}
	bare := map[string]GoBench{}
	for _, b := range bs {
		if parent, sub, ok := cutLast(b.Name); ok && sub == "bare" {
			bare[b.Pkg+" "+parent] = b
		}
	}
	for _, b := range bs {
		over := ""
		if parent, sub, ok := cutLast(b.Name); ok && sub != "bare" {
			if base, ok := bare[b.Pkg+" "+parent]; ok {
				over = fmt.Sprintf("%+.0f ns, %+.0f allocs (× %.2f)", b.NsPerOp-base.NsPerOp, b.AllocsPerOp-base.AllocsPerOp, b.NsPerOp/base.NsPerOp)
			}
		}
		name := b.Name
		if b.Procs > 0 {
			name += "-" + strconv.Itoa(b.Procs)
		}
		t.add(strings.TrimPrefix(b.Pkg, "github.com/pulse-dev/pulse/"), name, fmtNs(b.NsPerOp),
			strconv.FormatFloat(b.BytesPerOp, 'f', -1, 64), strconv.FormatFloat(b.AllocsPerOp, 'f', -1, 64), over)
	}
	return t
}

func cutLast(name string) (parent, sub string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

func fmtNs(ns float64) string {
	if ns >= 100 {
		return strconv.FormatFloat(ns, 'f', 0, 64)
	}
	return strconv.FormatFloat(ns, 'f', 1, 64)
}

// Splice replaces what lies between the markers in doc with generated,
// keeping everything else; a doc without markers gets them appended.
func Splice(doc, generated string) string {
	block := BeginMarker + "\n\n" + strings.TrimSpace(generated) + "\n\n" + EndMarker
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + block + "\n"
	}
	return doc[:i] + block + doc[j+len(EndMarker):]
}
