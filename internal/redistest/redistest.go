// Package redistest runs a real redis-server (Debian's package, which
// `make test` installs when missing) for tests: on a loopback port and a
// unix socket in the test's temporary directory, with nothing saved to
// disk, stopped when the test ends. Stop and Start let a test take the
// store away and bring it back on the same address.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	// Port is its loopback TCP port; Socket the path of its unix socket.
	Port   int
	Socket string
	// Password is what clients must AUTH with ("" for none).
	Password string

	t   testing.TB
	dir string
	mu  sync.Mutex
	cmd *exec.Cmd
}

// Options configure a Server; nil means no password.
type Options struct {
	Password string
}

// Start starts a redis-server that stops when t ends. It fails the test
// when redis-server is not installed: `make test` installs it.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed (make test installs it: apt-get install redis-server)")
	}
	dir := t.TempDir()
	s := &Server{t: t, dir: dir, Socket: filepath.Join(dir, "redis.sock")}
	if opts != nil {
		s.Password = opts.Password
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Addr is HOST:PORT of its loopback listener.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is redis://127.0.0.1:PORT/0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Start starts the server again after Stop, on the same port and socket,
// and waits until it answers PING.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	args := []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--unixsocket", s.Socket, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log")}
	if s.Password != "" {
		args = append(args, "--requirepass", s.Password)
	}
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.ping()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server on port %d did not answer PING within 10s: %v\n%s", s.Port, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit; a stopped server's
// clients see their connections refused.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// ping speaks just enough RESP to tell that the server serves.
func (s *Server) ping() error {
	c, err := net.DialTimeout("unix", s.Socket, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	cmd := "PING\r\n"
	if s.Password != "" {
		cmd = fmt.Sprintf("AUTH %s\r\nPING\r\n", s.Password)
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(line, "+PONG"):
			return nil
		case strings.HasPrefix(line, "-"):
			return fmt.Errorf("redis: %s", strings.TrimSpace(line))
		}
	}
}
