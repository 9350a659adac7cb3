package doccheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// pendingPages are pages linked from here that another line of work
// adds. While one is missing its links are let through; once it exists
// they are checked like any other.
var pendingPages = map[string]bool{
	"docs/entity-layouts.md": true,
}

// TestLinksResolve: every relative link reaches a file or directory of
// the repository, and every anchor a heading of the page it names.
func TestLinksResolve(t *testing.T) {
	pages := map[string]*page{}
	for _, p := range docPages(t) {
		pages[p.path] = p
	}
	for _, p := range docPages(t) {
		for _, l := range links(p) {
			target, anchor, _ := strings.Cut(l.url, "#")
			name := p.path
			if target != "" {
				name = path.Clean(path.Join(path.Dir(p.path), target))
			}
			if strings.HasPrefix(name, "../") {
				t.Errorf("%s:%d: %s leaves the repository", p.path, l.line, l.url)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
				if pendingPages[name] {
					t.Logf("%s:%d: %s is not written yet", p.path, l.line, name)
					continue
				}
				t.Errorf("%s:%d: %s: no such file", p.path, l.line, l.url)
				continue
			}
			if anchor == "" || !strings.HasSuffix(name, ".md") {
				continue
			}
			q := pages[name]
			if q == nil {
				q = readPage(t, name)
			}
			if !q.anchors[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", p.path, l.line, l.url, name, anchor)
			}
		}
	}
}

type link struct {
	line int
	url  string
}

// links lists a page's relative links, outside code blocks and spans.
func links(p *page) []link {
	var out []link
	fenced := false
	for i, line := range p.lines {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, "``"), -1) {
			u := m[1]
			if strings.Contains(u, "://") || strings.HasPrefix(u, "mailto:") {
				continue
			}
			out = append(out, link{line: i + 1, url: u})
		}
	}
	return out
}

func TestLinksFound(t *testing.T) {
	p := parsePage("docs/x.md", "See [a](a.md#top) and [`b`](../b.md), not `[c](c.md)`,\n"+
		"nor [d](https://example.com).\n```\n[e](e.md)\n```\n")
	got := links(p)
	if len(got) != 2 || got[0].url != "a.md#top" || got[1].url != "../b.md" {
		t.Errorf("links = %+v, want a.md#top and ../b.md", got)
	}
}
