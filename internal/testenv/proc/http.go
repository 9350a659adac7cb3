package proc

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Get fetches url and returns the body of a 200 answer; any other status
// is an error naming it. The harnesses of HTTP servers (Prometheus,
// Alertmanager) probe readiness and read their APIs with it.
func Get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return b, nil
}
