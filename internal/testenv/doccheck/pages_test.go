package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
var root = filepath.Join("..", "..", "..")

// page is one Markdown file: its lines, its fenced blocks and its headings.
type page struct {
	path    string // relative to root, with forward slashes
	lines   []string
	blocks  []block
	anchors map[string]bool
}

// block is one fenced code block.
type block struct {
	line int    // 1-based line of the opening fence
	lang string // the info string's first word
	mark string // "file", "excerpt" or "response", from the mark above the fence
	file string // the file the mark names, or the request whose answer the block shows
	text string // the content, the fence's indentation removed
}

var markRE = regexp.MustCompile(`^<!-- doccheck: (file|excerpt|response) (\S.*?) -->$`)

// parsePage splits Markdown into blocks and headings. Fences may be
// indented (inside a list item); their content loses that indentation.
func parsePage(path, text string) *page {
	p := &page{path: path, lines: strings.Split(text, "\n"), anchors: map[string]bool{}}
	seen := map[string]int{}
	for i := 0; i < len(p.lines); i++ {
		line := p.lines[i]
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") {
			indent := line[:len(line)-len(trimmed)]
			b := block{line: i + 1, lang: firstWord(strings.TrimPrefix(trimmed, "```"))}
			if m := markRE.FindStringSubmatch(prevNonBlank(p.lines, i)); m != nil {
				b.mark, b.file = m[1], m[2]
			}
			var body []string
			for i++; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != "```"; i++ {
				body = append(body, strings.TrimPrefix(p.lines[i], indent))
			}
			if len(body) > 0 {
				b.text = strings.Join(body, "\n") + "\n"
			}
			p.blocks = append(p.blocks, b)
			continue
		}
		if strings.HasPrefix(line, "#") {
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			a := slug(title)
			if n := seen[a]; n > 0 {
				p.anchors[a+"-"+strconv.Itoa(n)] = true
			} else {
				p.anchors[a] = true
			}
			seen[a]++
		}
	}
	return p
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func prevNonBlank(lines []string, i int) string {
	for j := i - 1; j >= 0; j-- {
		if s := strings.TrimSpace(lines[j]); s != "" {
			return s
		}
	}
	return ""
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// spaces turned into hyphens, hyphens and underscores; the rest dropped.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docPages is README.md, BENCHMARKS.md and every page under docs/.
func docPages(t *testing.T) []*page {
	t.Helper()
	names := []string{"README.md", "BENCHMARKS.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		names = append(names, "docs/"+filepath.Base(m))
	}
	sort.Strings(names[2:])
	var pages []*page
	for _, n := range names {
		pages = append(pages, readPage(t, n))
	}
	return pages
}

func readPage(t *testing.T, name string) *page {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return parsePage(name, string(text))
}

// readRepoFile reads a file by its path from the repository root.
func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ title, want string }{
		{"When Redis is down, slow or answering errors", "when-redis-is-down-slow-or-answering-errors"},
		{"net/http", "nethttp"},
		{"Echo v5", "echo-v5"},
		{"`api/durations` and JSON", "apidurations-and-json"},
		{"Docs that stay true", "docs-that-stay-true"},
	} {
		if got := slug(c.title); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

func TestParsePage(t *testing.T) {
	p := parsePage("x.md", "# Top\n\n<!-- doccheck: excerpt a/b.go -->\n```go\nx := 1\n```\n\n"+
		"1. item\n\n   ```go\n   y := 2\n   ```\n## Top\n")
	if len(p.blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(p.blocks))
	}
	if b := p.blocks[0]; b.mark != "excerpt" || b.file != "a/b.go" || b.text != "x := 1\n" || b.lang != "go" {
		t.Errorf("first block %+v", b)
	}
	if b := p.blocks[1]; b.mark != "" || b.text != "y := 2\n" {
		t.Errorf("indented block %+v", b)
	}
	if !p.anchors["top"] || !p.anchors["top-1"] {
		t.Errorf("anchors %v, want top and top-1", p.anchors)
	}
}
