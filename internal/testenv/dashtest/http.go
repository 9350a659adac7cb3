package dashtest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// Response is what a test reads back from one request.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends one request with header and reads its answer, failing t on a
// transport error. Redirects are not followed: a test sees them.
func Do(t testing.TB, method, url string, header http.Header) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// Get is Do of a GET without headers.
func Get(t testing.TB, url string) Response { return Do(t, http.MethodGet, url, nil) }

// Overview is the JSON of api/overview, as a client reads it.
type Overview struct {
	Precision int   `json:"precision"`
	From      int64 `json:"from"`
	To        int64 `json:"to"`
	Current   int64 `json:"current"`
	Now       int64 `json:"now"`
	Top       []struct {
		Name    string              `json:"name"`
		Total   int64               `json:"total"`
		Samples []timeseries.Sample `json:"samples"`
	} `json:"top"`
	Pinned []struct {
		Name    string              `json:"name"`
		Total   int64               `json:"total"`
		Samples []timeseries.Sample `json:"samples"`
	} `json:"pinned"`
	Totals []struct {
		Name  string `json:"name"`
		Total int64  `json:"total"`
	} `json:"totals"`
}

// GetOverview reads api/overview at u, failing t unless it answers 200
// with its JSON.
func GetOverview(t testing.TB, u string) Overview {
	t.Helper()
	r := Get(t, u)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var ov Overview
	if err := json.Unmarshal([]byte(r.Body), &ov); err != nil {
		t.Fatal(err)
	}
	return ov
}
