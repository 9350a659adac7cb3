package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// static holds the page's own script (its ES modules, see modules.go),
// style and icon, and echarts.min.js when `make assets` fetched it before
// the build. The directory always has the committed files, so the embed
// compiles without it.
//
//go:embed static
var static embed.FS

// echartsFile is the bundle fetched at build time (never committed).
const echartsFile = "echarts.min.js"

// The echarts release the page is written for: the version pinned in
// dashboard/assets/package.json, the immutable URL it is loaded from when
// no copy is embedded, and the SHA-384 of that file (dist/echarts.min.js
// of the npm tarball) that the browser checks before running it.
// TestEchartsPin checks them against package.json and the fetched file.
const (
	EchartsVersion   = "5.6.0"
	EchartsCDN       = "https://cdn.jsdelivr.net/npm/echarts@" + EchartsVersion + "/dist/echarts.min.js"
	EchartsIntegrity = "sha384-pPi0zxBAoDu6+JXW/C68UZLvBUUtU+7zonhif43rqj7pxsGyqyqzcian2Rj37Rss"
)

// echartsOrigin is the only origin the page's CSP names besides its own.
const echartsOrigin = "https://cdn.jsdelivr.net"

// asset is one embedded file, served with a content hash as its version.
type asset struct {
	name    string
	body    []byte
	ctype   string
	version string // first hex digits of the body's SHA-256
	etag    string

	gzipOnce sync.Once
	gzipped  []byte // nil when compression does not pay
}

var assets = loadAssets()

func loadAssets() map[string]*asset {
	out := map[string]*asset{}
	modules := map[string][]byte{}
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		panic("dashboard: embedded assets: " + err.Error()) // the embed guarantees the directory
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		body, err := static.ReadFile("static/" + e.Name())
		if err != nil {
			panic("dashboard: embedded assets: " + err.Error())
		}
		if isModule(e.Name()) {
			modules[e.Name()] = body
			continue
		}
		out[e.Name()] = newAsset(e.Name(), body)
	}
	for name, a := range linkModules(modules) {
		out[name] = a
	}
	return out
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	v := hex.EncodeToString(sum[:6])
	return &asset{name: name, body: body, ctype: contentType(name), version: v, etag: `"` + v + `"`}
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// EchartsEmbedded reports whether echarts.min.js was embedded in this
// package at build time (`make assets` in a clone of Pulse). Without it,
// and without Config.Echarts, the page loads echarts from EchartsCDN,
// which needs internet access.
func EchartsEmbedded() bool { return assets[echartsFile] != nil }

// url is the relative URL of a served file, versioned by content so that
// browsers may cache it for good.
func (a *asset) url() string { return "static/" + a.name + "?v=" + a.version }

// assetURL is the relative URL of an embedded file.
func assetURL(name string) string {
	a := assets[name]
	if a == nil {
		return "static/" + name
	}
	return a.url()
}

func (a *asset) gzipBody() []byte {
	a.gzipOnce.Do(func() {
		if !strings.HasSuffix(a.ctype, "charset=utf-8") && a.ctype != "image/svg+xml" {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if buf.Len() < len(a.body)*9/10 {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
}

// acceptsGzip reads Accept-Encoding: gzip with no weight or a weight
// above zero.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		w, err := strconv.ParseFloat(q, 64)
		return err == nil && w > 0
	}
	return false
}

// handleAsset serves an embedded file: GET static/{file}. With the current
// version in the query it is immutable; otherwise it is revalidated.
func (s *server) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	a := assets[name]
	if name == echartsFile {
		a = s.echarts
	}
	if a == nil {
		msg := "no such asset"
		if name == echartsFile {
			msg = "echarts.min.js is not embedded: the page loads it from " + EchartsCDN
		}
		jsonError(w, http.StatusNotFound, msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Add("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, a.etag
	if gz := a.gzipBody(); gz != nil && acceptsGzip(r) && r.Header.Get("Range") == "" {
		body, etag = gz, `"`+a.version+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(body))
}
