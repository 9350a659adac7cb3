package main

import (
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
)

// TestMinimalgin runs the program as a user would, against a private
// redis-server (see minimaltest.Run).
func TestMinimalgin(t *testing.T) { minimaltest.Run(t, "GET /") }
