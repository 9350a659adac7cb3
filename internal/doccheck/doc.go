// Package doccheck has no code, only tests that keep the README true to
// the files it quotes.
package doccheck
