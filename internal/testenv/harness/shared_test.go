package harness

import (
	"errors"
	"testing"
)

type fake struct{ tries, started, stopped int }

func (f *fake) shared(fail bool) *Shared[int] {
	return NewShared(func() (int, error) {
		f.tries++
		if fail {
			return 0, errors.New("no server")
		}
		f.started++
		return f.started, nil
	}, func(int) { f.stopped++ })
}

func TestSharedWithoutSetupIsPerTest(t *testing.T) {
	var f fake
	sh := f.shared(false)
	t.Run("a", func(t *testing.T) {
		for range 2 {
			if _, err := sh.Get(t); err != nil {
				t.Fatal(err)
			}
		}
	})
	if f.started != 2 || f.stopped != 2 {
		t.Fatalf("started %d, stopped %d; want a server per Get, stopped with its test", f.started, f.stopped)
	}
}

func TestSharedUnderSetup(t *testing.T) {
	var f fake
	sh := f.shared(false)
	teardown, err := sh.Setup()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		t.Run("get", func(t *testing.T) {
			if s, err := sh.Get(t); err != nil || s != 1 {
				t.Fatalf("Get = %d, %v", s, err)
			}
		})
	}
	if f.started != 1 || f.stopped != 0 {
		t.Fatalf("started %d, stopped %d before teardown", f.started, f.stopped)
	}
	teardown()
	teardown()
	if f.stopped != 1 {
		t.Fatalf("stopped %d times by teardown", f.stopped)
	}
}

func TestSharedFailureIsKept(t *testing.T) {
	var f fake
	sh := f.shared(true)
	teardown, _ := sh.Setup()
	defer teardown()
	for range 2 {
		if _, err := sh.Get(t); err == nil {
			t.Fatal("Get succeeded")
		}
	}
	if f.tries != 1 || f.stopped != 0 {
		t.Fatalf("%d starts tried, %d stops; want one try and no stop", f.tries, f.stopped)
	}
}
