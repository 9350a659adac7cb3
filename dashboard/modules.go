package dashboard

import (
	"path"
	"regexp"
	"sort"
)

// The page's own script is a set of ES modules in static/: every .js file
// there but echarts.min.js. The page loads entryModule with
// <script type="module">, which imports the others by relative URL
// (import { view } from './state.js'). As served, each such URL carries
// the imported module's version ('./state.js?v=…'), so a module's version
// covers everything it imports and every module is cached for good, like
// the other assets. Module scripts come from the page's own origin, which
// the CSP's script-src 'self' allows; no import map (an inline script) is
// needed.

// entryModule is the module the page loads; it imports the rest.
const entryModule = "main.js"

// importRE matches a static import or re-export of a sibling module, the
// only form the page's modules use: from './name.js' or import './name.js'.
var importRE = regexp.MustCompile(`(\bfrom\s*|\bimport\s*)'\./([A-Za-z0-9_-]+\.js)'`)

// isModule reports whether an embedded file is one of the page's modules.
func isModule(name string) bool {
	return path.Ext(name) == ".js" && name != echartsFile
}

// moduleLinker versions modules depth first: a module's imports first, so
// that their versions can be written into it.
type moduleLinker struct {
	raw  map[string][]byte // module name -> body as committed
	done map[string]*asset
	busy map[string]bool // on the path being linked: a cycle if met again
}

// linkModules returns the served assets of the modules in raw. It panics
// on an import of a file that is not a module or on an import cycle: both
// are mistakes in the committed files, which every test of the package
// would meet.
func linkModules(raw map[string][]byte) map[string]*asset {
	l := &moduleLinker{raw: raw, done: map[string]*asset{}, busy: map[string]bool{}}
	for name := range raw {
		l.link(name)
	}
	return l.done
}

func (l *moduleLinker) link(name string) *asset {
	if a := l.done[name]; a != nil {
		return a
	}
	if l.busy[name] {
		panic("dashboard: import cycle through static/" + name)
	}
	l.busy[name] = true
	body := importRE.ReplaceAllFunc(l.raw[name], func(m []byte) []byte {
		sub := importRE.FindSubmatch(m)
		dep := string(sub[2])
		if _, ok := l.raw[dep]; !ok {
			panic("dashboard: static/" + name + " imports " + dep + ", which is not a module in static/")
		}
		return []byte(string(sub[1]) + "'./" + dep + "?v=" + l.link(dep).version + "'")
	})
	delete(l.busy, name)
	a := newAsset(name, body)
	l.done[name] = a
	return a
}

// moduleURLs lists the versioned URLs of every module, sorted by name, for
// the page to preload them all at once rather than one import at a time.
func moduleURLs() []string {
	var names []string
	for name := range assets {
		if isModule(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	urls := make([]string, len(names))
	for i, name := range names {
		urls[i] = assets[name].url()
	}
	return urls
}
