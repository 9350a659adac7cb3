package main

import (
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
)

// TestMinimalfiber runs the program as a user would, against a private
// redis-server (see minimaltest.Run).
func TestMinimalfiber(t *testing.T) { minimaltest.Run(t, "GET /") }
