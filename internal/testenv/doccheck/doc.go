// Package doccheck has no code, only tests that keep README.md, BENCHMARKS.md
// and the pages under docs/ true to the code they describe.
//
// A Go block in a page is held to a file by a mark on the line before it:
//
//	<!-- doccheck: file example/minimal/main.go -->     the block is the whole file
//	<!-- doccheck: excerpt example/minimal/main.go -->  the block is a run of the file's lines
//
// An excerpt may leave out the lines' common indentation, and a line
// "// …" in it stands for lines left out. A block that is a whole program
// (it starts with "package" or "// Command") must carry a mark; every
// other Go block must parse. Relative links must reach a file, and an
// anchor a heading of the page it names. JSON blocks must parse and use
// only field names the code writes; one marked
//
//	<!-- doccheck: response GET api/counters -->
//
// must name only fields that a real dashboard's answer to that request
// has. The API, configuration and metrics pages must list every
// endpoint, Config field and metric the code has.
package doccheck
