package main

import (
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
)

// TestMinimalV5 runs the program as a user would, against a private
// redis-server (see minimaltest.Run).
func TestMinimalV5(t *testing.T) { minimaltest.Run(t, "GET /") }
