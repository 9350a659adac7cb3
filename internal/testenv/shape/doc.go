// Package shape holds the tests of the tree's shape that no single
// package owns, such as the bound on the methods of a type.
package shape
