package fleet

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes runs as a table, one row a run.
func WriteTable(w io.Writer, label string, runs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tinstances\troutes\tseries\treq/s\tRedis CPU/s\tbusiest node\tcmds/s\tround trips/s\tMB/s in\tmemory MB\tworst lag\tholds\t")
	var errs []string
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.0f\t%.0f\t%.2f\t%.1f\t%.1fs\t%v\t\n", label, r.Config.Instances, r.Config.Routes,
			r.Series, r.Requests, r.CPU, r.BusiestCPU, r.Commands, r.RoundTrips, r.BytesIn/1e6, float64(r.Memory)/1e6,
			r.WorstLag.Seconds(), r.Holds())
		if r.Errors != "" {
			errs = append(errs, fmt.Sprintf("%s, %d instances: %s", label, r.Config.Instances, r.Errors))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range errs {
		if _, err := fmt.Fprintln(w, e); err != nil {
			return err
		}
	}
	return nil
}
