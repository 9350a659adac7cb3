package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// moduleRoot is where go.mod is, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// cleanCopy copies the files a fresh clone has (tracked, or new and not
// ignored by git) into a temporary directory: no echarts.min.js, which
// only `make assets` fetches.
func cleanCopy(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		body, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "dashboard", "static", "echarts.min.js")); err == nil {
		t.Fatal("the clean copy has echarts.min.js: is it tracked by git?")
	}
	return dir
}

// TestMinimalFromCleanClone builds the program from a copy of the module
// without any asset step, runs it against a private redis-server, and
// checks that the page's external scripts carry integrity hashes, that a
// request is counted, and that SIGTERM ends it cleanly with the hit written.
func TestMinimalFromCleanClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program from scratch")
	}
	dir := cleanCopy(t, moduleRoot(t))
	bin := filepath.Join(t.TempDir(), "minimal")
	build := exec.Command("go", "build", "-o", bin, "./example/minimal")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a clean copy: %v\n%s", err, out)
	}

	srv := redistest.Start(t)
	addr := minimaltest.FreeAddr(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "REDIS_URL=redis://"+srv.Addr+"/0", "ADDR="+addr)
	var logs minimaltest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	base := "http://" + addr
	var page string
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/dashboard/")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				page = string(b)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard within 30 s: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	external := 0
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(tag, `src="https://`) && !strings.Contains(tag, `src="http://`) {
			continue
		}
		external++
		if !regexp.MustCompile(`integrity="sha384-[A-Za-z0-9+/]{64}"`).MatchString(tag) || !strings.Contains(tag, `crossorigin="anonymous"`) {
			t.Errorf("external script without an integrity hash: %s", tag)
		}
	}
	if external == 0 {
		t.Errorf("a build without assets loads no external echarts:\n%s", page)
	}
	if !strings.Contains(logs.String(), "dashboard.Config.Echarts") {
		t.Errorf("the log does not say how to embed echarts:\n%s", logs.String())
	}

	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after SIGTERM\n%s", logs.String())
	}
	// One request to the app, none of the dashboard's, written on the way out.
	if got := srv.HashSum("count:86400:hits"); got != 1 {
		t.Errorf("hits after exit: %d, want 1", got)
	}
	if got := srv.HashSum("count:86400:GET /"); got != 1 {
		t.Errorf("GET / after exit: %d, want 1", got)
	}
}
