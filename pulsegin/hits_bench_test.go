package pulsegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/pulse-dev/pulse/internal/testenv/hitbench"
	"github.com/pulse-dev/pulse/pulsegin"
	"github.com/pulse-dev/pulse/timeseries"
)

// postApp is the measured app: one route with a path parameter and a
// trivial handler, behind mw when it is not nil.
func postApp(mw gin.HandlerFunc) http.Handler {
	r := gin.New()
	if mw != nil {
		r.Use(mw)
	}
	r.GET("/posts/:id", func(c *gin.Context) { c.String(http.StatusOK, "post") })
	return r
}

func counted(rec *timeseries.Recorder) http.Handler {
	return postApp(pulsegin.HitsWithConfig(pulsegin.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
}

// Counting a request adds no allocation to Gin's own, on a route or off.
func TestHitsAllocs(t *testing.T) {
	hitbench.Allocs(t, postApp(nil), counted, "GET /posts/:id", "/posts/42", "/nowhere")
}

// BenchmarkHits serves one request per op, bare and counted.
func BenchmarkHits(b *testing.B) {
	hitbench.Bench(b, postApp(nil), counted, "GET /posts/:id", "/posts/42")
}
