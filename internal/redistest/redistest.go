// Package redistest runs a real redis-server (Debian's package, which
// `make test` installs when missing) for tests: on a loopback port and a
// unix socket in the test's temporary directory, with nothing saved to
// disk, stopped when the test ends. Stop and Start let a test take the
// store away and bring it back on the same address.
package redistest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
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
	// With Options.TLS, Port serves TLS only.
	Port   int
	Socket string
	// Password is what clients must AUTH with ("" for none).
	Password string
	// CAFile is the PEM certificate that signs the server's (with
	// Options.TLS), for clients to trust.
	CAFile string

	t   testing.TB
	dir string
	mu  sync.Mutex
	cmd *exec.Cmd
}

// Options configure a Server; nil means no password and no TLS.
type Options struct {
	Password string
	// TLS serves TLS on Port (a certificate for 127.0.0.1 made for the
	// test, in CAFile) instead of plaintext.
	TLS bool
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
		if opts.TLS {
			s.CAFile = writeCert(t, dir)
		}
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

// URL is redis://127.0.0.1:PORT/0, or rediss:// with Options.TLS.
func (s *Server) URL() string {
	if s.CAFile != "" {
		return "rediss://" + s.Addr() + "/0"
	}
	return "redis://" + s.Addr() + "/0"
}

// writeCert writes a self-signed certificate for 127.0.0.1 (cert.pem,
// which is also the CA clients trust) and its key (key.pem) into dir.
func writeCert(t testing.TB, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile
}

// Start starts the server again after Stop, on the same port and socket,
// and waits until it answers PING.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	port := []string{"--port", strconv.Itoa(s.Port)}
	if s.CAFile != "" {
		port = []string{"--port", "0", "--tls-port", strconv.Itoa(s.Port),
			"--tls-cert-file", s.CAFile, "--tls-key-file", filepath.Join(s.dir, "key.pem"), "--tls-auth-clients", "no"}
	}
	args := append(port, "--bind", "127.0.0.1",
		"--unixsocket", s.Socket, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"))
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

// StartSentinel starts a Redis Sentinel (redis-server --sentinel) that
// monitors master under the name "mymaster", and returns its loopback
// port. It stops when t ends.
func StartSentinel(t testing.TB, master *Server) int {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel monitor mymaster 127.0.0.1 %d 1\nsentinel down-after-milliseconds mymaster 1000\n",
		port, dir, filepath.Join(dir, "sentinel.log"), master.Port)
	if master.Password != "" {
		conf += "sentinel auth-pass mymaster " + master.Password + "\n"
	}
	path := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("redis-server", path, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server --sentinel: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			_, err = c.Write([]byte("PING\r\n"))
			var line string
			if err == nil {
				line, err = bufio.NewReader(c).ReadString('\n')
			}
			c.Close()
			if err == nil && strings.HasPrefix(line, "+PONG") {
				return port
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "sentinel.log"))
			t.Fatalf("the Sentinel on port %d did not answer PING within 10s: %v\n%s", port, err, log)
		}
	}
}
