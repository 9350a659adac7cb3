package main

import (
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
)

// TestMinimalchi runs the program as a user would, against a private
// redis-server (see minimaltest.Run).
func TestMinimalchi(t *testing.T) { minimaltest.Run(t, "GET /") }
