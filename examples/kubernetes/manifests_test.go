// Package kubernetes_test checks the example manifests and the Dockerfile
// against the gateway they deploy: every document parses, kinds and
// apiVersions are the stable ones, selectors and ports line up, the
// gateway's arguments are flags the built binary accepts, and the probes
// point at paths a running gateway answers.
package kubernetes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// The parts of the Kubernetes objects the checks read. Fields not named
// here are ignored by the decoder; `kubectl apply --dry-run=server` is the
// check for the rest, and needs a cluster.
type object struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   metadata `yaml:"metadata"`
	Spec       spec     `yaml:"spec"`
}

type metadata struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type spec struct {
	// Deployment
	Replicas *int     `yaml:"replicas"`
	Selector selector `yaml:"selector"`
	Template struct {
		Metadata metadata `yaml:"metadata"`
		Spec     podSpec  `yaml:"spec"`
	} `yaml:"template"`
	// Service: selector is a plain map there.
	Ports []struct {
		Name       string `yaml:"name"`
		Port       int    `yaml:"port"`
		TargetPort any    `yaml:"targetPort"`
	} `yaml:"ports"`
	// PodDisruptionBudget
	MinAvailable *int `yaml:"minAvailable"`
}

// selector is a Deployment's or PDB's {matchLabels: ...} or a Service's
// plain label map.
type selector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
	plain       map[string]string
}

func (s *selector) UnmarshalYAML(b []byte) error {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return err
	}
	if ml, ok := m["matchLabels"]; ok {
		raw, err := yaml.Marshal(ml)
		if err != nil {
			return err
		}
		return yaml.Unmarshal(raw, &s.MatchLabels)
	}
	return yaml.Unmarshal(b, &s.plain)
}

func (s selector) labels() map[string]string {
	if s.MatchLabels != nil {
		return s.MatchLabels
	}
	return s.plain
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot *bool `yaml:"runAsNonRoot"`
	} `yaml:"securityContext"`
	TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
	Volumes                       []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
	Containers []container `yaml:"containers"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe   *probe `yaml:"livenessProbe"`
	ReadinessProbe  *probe `yaml:"readinessProbe"`
	StartupProbe    *probe `yaml:"startupProbe"`
	SecurityContext struct {
		RunAsUser                *int  `yaml:"runAsUser"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	ReadOnly  bool   `yaml:"readOnly"`
	MountPath string `yaml:"mountPath"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

// stable are the kinds the examples may use, at their GA apiVersions.
var stable = map[string]string{
	"Deployment":          "apps/v1",
	"Service":             "v1",
	"PodDisruptionBudget": "policy/v1",
	"Secret":              "v1",
}

// load decodes every document of a manifest file.
func load(t *testing.T, name string) []object {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []object
	dec := yaml.NewDecoder(f)
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, len(objs)+1, err)
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		t.Fatalf("%s: no documents", name)
	}
	return objs
}

func TestManifests(t *testing.T) {
	bin := testkit.GatewayBinary(t)
	flags := acceptedFlags(t, bin)
	served := servedPaths(t, bin)

	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{"redis.yaml", "shared.yaml", "sidecar.yaml"}) {
		t.Fatalf("manifests %v: update this test and README.md for new ones", files)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			objs := load(t, file)
			var deployments []object
			for _, o := range objs {
				if want, ok := stable[o.Kind]; !ok || o.APIVersion != want {
					t.Errorf("%s %q: apiVersion %q, want a stable kind at its GA version (%v)", o.Kind, o.Metadata.Name, o.APIVersion, stable)
				}
				if o.Metadata.Name == "" {
					t.Errorf("%s without metadata.name", o.Kind)
				}
				if o.Kind == "Deployment" {
					deployments = append(deployments, o)
					checkDeployment(t, o, flags, served)
				}
			}
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deployments))
			}
			d := deployments[0]
			for _, o := range objs {
				switch o.Kind {
				case "Service":
					checkService(t, o, d)
				case "PodDisruptionBudget":
					if !subset(o.Spec.Selector.labels(), d.Spec.Template.Metadata.Labels) {
						t.Errorf("PDB %s selects %v, not the Deployment's Pods", o.Metadata.Name, o.Spec.Selector.labels())
					}
					if o.Spec.MinAvailable == nil || d.Spec.Replicas == nil || *o.Spec.MinAvailable >= *d.Spec.Replicas {
						t.Errorf("PDB %s: minAvailable must be below the replicas, or no node can ever be drained", o.Metadata.Name)
					}
				}
			}
			switch file {
			case "sidecar.yaml":
				checkSidecar(t, d)
			case "shared.yaml":
				checkShared(t, objs, d)
			case "redis.yaml":
				checkRedis(t, objs, d)
			}
		})
	}
}

// checkDeployment checks what every gateway Deployment needs.
func checkDeployment(t *testing.T, d object, flags map[string]bool, served map[string]bool) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if !subset(d.Spec.Selector.labels(), d.Spec.Template.Metadata.Labels) || len(d.Spec.Selector.labels()) == 0 {
		t.Errorf("Deployment %s: selector %v does not match the template labels %v", d.Metadata.Name, d.Spec.Selector.labels(), d.Spec.Template.Metadata.Labels)
	}
	if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("Deployment %s: Pod securityContext.runAsNonRoot is not true", d.Metadata.Name)
	}
	// The gateway's --shutdown-grace defaults to 15s; the kubelet's kill
	// must come later or in-flight calls are cut.
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= 15 {
		t.Errorf("Deployment %s: terminationGracePeriodSeconds must exceed the 15s shutdown grace", d.Metadata.Name)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			!slices.Contains(sc.Capabilities.Drop, "ALL") || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("container %s: want non-root, read-only root, no privilege escalation, all capabilities dropped", c.Name)
		}
		if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
			t.Errorf("container %s: want cpu and memory requests and a memory limit", c.Name)
		}
		if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
			t.Errorf("container %s: image %q: want a pinned tag", c.Name, c.Image)
		}
	}
	if !slices.ContainsFunc(pod.Containers, func(c container) bool { return c.Name == "gateway" }) {
		return // redis.yaml: checkRedis
	}
	gw := gatewayContainer(t, d)
	args := map[string]string{}
	for _, a := range gw.Args {
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !flags[name] {
			t.Errorf("gateway argument %q: the gateway has no such flag (see gateway -h)", a)
		}
		args[name] = value
	}
	checkExposure(t, "gateway", gw.Args)
	// The kubelet probes the admin listener when there is one, else the
	// MCP one; whichever it is must listen on the Pod's address, and be
	// the one port the container declares.
	probed := args["listen"]
	if args["admin-listen"] != "" {
		probed = args["admin-listen"]
	}
	_, port, err := net.SplitHostPort(probed)
	if err != nil || !strings.HasPrefix(probed, "0.0.0.0:") {
		t.Fatalf("gateway listener %q for the probes: want 0.0.0.0:PORT, or the kubelet cannot reach it", probed)
	}
	if len(gw.Ports) != 1 || strconv.Itoa(gw.Ports[0].ContainerPort) != port {
		t.Errorf("gateway containerPort %v does not match the probed port %s", gw.Ports, port)
	}
	for kind, p := range map[string]*probe{"liveness": gw.LivenessProbe, "readiness": gw.ReadinessProbe, "startup": gw.StartupProbe} {
		if p == nil {
			if kind != "startup" {
				t.Errorf("gateway has no %s probe", kind)
			}
			continue
		}
		if p.HTTPGet == nil {
			t.Errorf("gateway %s probe is not httpGet", kind)
			continue
		}
		if !served[p.HTTPGet.Path] {
			t.Errorf("gateway %s probe path %q: a running gateway does not answer 200 there", kind, p.HTTPGet.Path)
		}
		if resolvePort(gw, p.HTTPGet.Port) != gw.Ports[0].ContainerPort {
			t.Errorf("gateway %s probe port %v is not the gateway's port", kind, p.HTTPGet.Port)
		}
	}
	if gw.LivenessProbe != nil && gw.LivenessProbe.HTTPGet != nil && gw.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe on %s: use /healthz, which stays up while a backend is down (a restart would not help)", gw.LivenessProbe.HTTPGet.Path)
	}
}

func checkService(t *testing.T, s object, d object) {
	t.Helper()
	if !subset(s.Spec.Selector.labels(), d.Spec.Template.Metadata.Labels) || len(s.Spec.Selector.labels()) == 0 {
		t.Errorf("Service %s selects %v, not the Deployment's Pods", s.Metadata.Name, s.Spec.Selector.labels())
	}
	// The container serving the Service: the gateway, or Redis.
	served := d.Spec.Template.Spec.Containers[0]
	if i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c container) bool { return c.Name == "gateway" }); i >= 0 {
		served = d.Spec.Template.Spec.Containers[i]
	}
	for _, p := range s.Spec.Ports {
		if len(served.Ports) == 0 || resolvePort(served, p.TargetPort) != served.Ports[0].ContainerPort {
			t.Errorf("Service %s port %d: targetPort %v is not container %s's port", s.Metadata.Name, p.Port, p.TargetPort, served.Name)
		}
	}
}

// checkExposure applies the gateway's own start-up rule to its arguments:
// a --listen others can reach needs authentication.
func checkExposure(t *testing.T, where string, args []string) {
	t.Helper()
	listen := argValue(args, "listen")
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("%s --listen=%q: want HOST:PORT", where, listen)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return
	}
	if argValue(args, "bearer-tokens-file") == "" && argValue(args, "oauth-jwks-url") == "" {
		t.Errorf("%s --listen=%s is reachable from outside without --bearer-tokens-file or --oauth-jwks-url: the gateway refuses to start so", where, listen)
	}
}

// checkSidecar: the service and the MCP endpoints stay in the Pod (the
// service on a unix socket in a volume only the Pod's containers share,
// or on loopback), and the gateway fronts the service there.
func checkSidecar(t *testing.T, d object) {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 2 {
		t.Fatalf("%d containers, want the service and the gateway", n)
	}
	gw := gatewayContainer(t, d)
	if host, _, _ := net.SplitHostPort(argValue(gw.Args, "listen")); host != "127.0.0.1" {
		t.Errorf("sidecar gateway --listen=%s: the MCP endpoints belong on 127.0.0.1 in the Pod", argValue(gw.Args, "listen"))
	}
	backend := argValue(gw.Args, "backend")
	socket, unix := strings.CutPrefix(backend, "unix://")
	if host, _, err := net.SplitHostPort(backend); !unix && (err != nil || !net.ParseIP(host).IsLoopback()) {
		t.Errorf("gateway --backend=%q: the sidecar's service belongs on a unix socket or loopback", backend)
	}
	// The socket's directory is an emptyDir volume, mounted by the gateway
	// and the service at the same path.
	volume := ""
	if unix {
		for _, v := range d.Spec.Template.Spec.Volumes {
			for _, m := range gw.VolumeMounts {
				if m.Name == v.Name && m.MountPath == filepath.Dir(socket) && v.EmptyDir != nil {
					volume = v.Name
				}
			}
		}
		if volume == "" {
			t.Errorf("gateway --backend=%s: no emptyDir volume mounted by the gateway at %s", backend, filepath.Dir(socket))
		}
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "gateway" {
			continue
		}
		if unix && !slices.ContainsFunc(c.VolumeMounts, func(m volumeMount) bool { return m.Name == volume && m.MountPath == filepath.Dir(socket) }) {
			t.Errorf("service container %s does not mount the socket volume %q at %s", c.Name, volume, filepath.Dir(socket))
		}
		if len(c.Ports) != 0 {
			t.Errorf("service container %s exposes ports %v: only the gateway should", c.Name, c.Ports)
		}
		if !slices.Contains(c.Args, backend) {
			t.Errorf("service container %s args %v do not listen on the gateway's --backend %s", c.Name, c.Args, backend)
		}
	}
}

// checkShared: several replicas, and the session secret they share.
func checkShared(t *testing.T, objs []object, d object) {
	t.Helper()
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("shared Deployment replicas %v: want several", d.Spec.Replicas)
	}
	if !slices.ContainsFunc(objs, func(o object) bool { return o.Kind == "PodDisruptionBudget" }) {
		t.Error("shared deployment without a PodDisruptionBudget")
	}
	pod := d.Spec.Template.Spec
	gw := gatewayContainer(t, d)
	secrets := 0
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName == "" {
			continue
		}
		secrets++
		if !slices.ContainsFunc(gw.VolumeMounts, func(m volumeMount) bool {
			return m.Name == v.Name && m.ReadOnly
		}) {
			t.Errorf("the gateway does not mount the Secret volume %s read-only", v.Name)
		}
	}
	if secrets < 3 {
		t.Errorf("%d Secret volumes: want the shared session secret, the bearer tokens and the state store's password", secrets)
	}
	if argValue(gw.Args, "state") == "" || argValue(gw.Args, "state-password-file") == "" {
		t.Error("the shared gateway needs --state and --state-password-file: without them the replicas do not share kept results, DELETE, cancellations and per-principal limits")
	}
	if argValue(gw.Args, "session-secret-file") == "" || argValue(gw.Args, "bearer-tokens-file") == "" {
		t.Error("the shared gateway needs --session-secret-file and --bearer-tokens-file")
	}
	if argValue(gw.Args, "allowed-host") == "" {
		t.Error("the shared gateway names its Service's host with --allowed-host, or clients using that name get 403")
	}
}

// checkRedis: the store shared.yaml's --state names is this Deployment's
// Service, on its port, with the password from the Secret shared.yaml's
// --state-password-file is mounted from.
func checkRedis(t *testing.T, objs []object, d object) {
	t.Helper()
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("redis Deployment replicas %v: want exactly 1 (two would split the fleet's state)", d.Spec.Replicas)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "redis" || len(cs[0].Ports) != 1 {
		t.Fatalf("redis.yaml: want one container named redis with one port, got %+v", cs)
	}
	redis := cs[0]
	var secret string
	for _, e := range redis.Env {
		if e.Name == "REDIS_PASSWORD" && e.ValueFrom.SecretKeyRef != nil {
			secret = e.ValueFrom.SecretKeyRef.Name
		}
	}
	if secret == "" || !slices.Contains(redis.Args, "$(REDIS_PASSWORD)") || redis.Args[slices.Index(redis.Args, "$(REDIS_PASSWORD)")-1] != "--requirepass" {
		t.Errorf("redis.yaml: want --requirepass $(REDIS_PASSWORD), from a Secret")
	}
	var shared object
	for _, o := range load(t, "shared.yaml") {
		if o.Kind == "Deployment" {
			shared = o
		}
	}
	gw := gatewayContainer(t, shared)
	u, err := url.Parse(argValue(gw.Args, "state"))
	if err != nil {
		t.Fatalf("shared.yaml --state: %v", err)
	}
	var svc object
	for _, o := range objs {
		if o.Kind == "Service" {
			svc = o
		}
	}
	if len(svc.Spec.Ports) != 1 || u.Hostname() != svc.Metadata.Name || u.Port() != strconv.Itoa(svc.Spec.Ports[0].Port) {
		t.Errorf("shared.yaml --state=%s does not name redis.yaml's Service %s and its port", u, svc.Metadata.Name)
	}
	mounted := false
	for _, v := range shared.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			for _, m := range gw.VolumeMounts {
				if m.Name == v.Name && strings.HasPrefix(argValue(gw.Args, "state-password-file"), m.MountPath+"/") {
					mounted = true
				}
			}
		}
	}
	if !mounted {
		t.Errorf("shared.yaml's --state-password-file is not in the Secret %s that Redis takes its password from", secret)
	}
}

func gatewayContainer(t *testing.T, d object) container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "gateway" {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container named gateway", d.Metadata.Name)
	return container{}
}

// resolvePort turns a probe's or Service's port (a number or a port
// name) into the container's port number; 0 if it names none.
func resolvePort(c container, port any) int {
	switch p := port.(type) {
	case string:
		for _, cp := range c.Ports {
			if cp.Name == p {
				return cp.ContainerPort
			}
		}
	case uint64:
		return int(p)
	case int64:
		return int(p)
	case int:
		return p
	}
	return 0
}

func argValue(args []string, name string) string {
	for _, a := range args {
		if n, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok && n == name {
			return v
		}
	}
	return ""
}

func subset(sub, super map[string]string) bool {
	for k, v := range sub {
		if super[k] != v {
			return false
		}
	}
	return true
}

// TestDockerfile checks the Dockerfile against the binary: its health
// check and default arguments use flags the gateway accepts, it listens
// where it EXPOSEs, and it runs as a numeric non-root user (which
// Kubernetes' runAsNonRoot can verify).
func TestDockerfile(t *testing.T) {
	bin := testkit.GatewayBinary(t)
	flags := acceptedFlags(t, bin)
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string][]string{} // instruction -> its lines, continuations joined
	for line := range strings.Lines(strings.ReplaceAll(string(raw), "\\\n", " ")) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		lines[strings.ToUpper(instr)] = append(lines[strings.ToUpper(instr)], strings.TrimSpace(rest))
	}
	froms := lines["FROM"]
	if len(froms) != 2 || !strings.HasPrefix(froms[len(froms)-1], "gcr.io/distroless/static") {
		t.Errorf("FROM %v: want a builder and a distroless static final stage", froms)
	}
	users := lines["USER"]
	if len(users) != 1 {
		t.Fatalf("USER %v: want exactly one", users)
	}
	uid, _, _ := strings.Cut(users[0], ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %s: want a numeric non-root uid", users[0])
	}
	exec := func(instr string) []string {
		if len(lines[instr]) != 1 {
			t.Fatalf("%s: want exactly one, got %v", instr, lines[instr])
		}
		v := lines[instr][0]
		if instr == "HEALTHCHECK" {
			_, v, _ = strings.Cut(v, "CMD ")
		}
		var out []string
		if err := yaml.Unmarshal([]byte(v), &out); err != nil { // a JSON array is YAML
			t.Fatalf("%s %s: want the exec (JSON array) form: distroless has no shell: %v", instr, v, err)
		}
		return out
	}
	if ep := exec("ENTRYPOINT"); !slices.Equal(ep, []string{"/gateway"}) {
		t.Errorf("ENTRYPOINT %v", ep)
	}
	cmd := exec("CMD")
	hc := exec("HEALTHCHECK")
	for _, args := range [][]string{cmd, hc[1:]} {
		for _, a := range args {
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && !flags[name] {
				t.Errorf("Dockerfile uses %s, which the gateway does not accept", a)
			}
		}
	}
	checkExposure(t, "Dockerfile CMD", joinFlagValues(cmd))
	listen := argValue(joinFlagValues(cmd), "listen")
	_, port, err := net.SplitHostPort(listen)
	if err != nil || !strings.HasPrefix(listen, "0.0.0.0:") {
		t.Fatalf("CMD --listen %q: want 0.0.0.0:PORT", listen)
	}
	if !slices.Contains(lines["EXPOSE"], port) {
		t.Errorf("EXPOSE %v does not include the --listen port %s", lines["EXPOSE"], port)
	}
	if len(hc) != 3 || hc[0] != "/gateway" || hc[1] != "--probe" || !strings.Contains(hc[2], ":"+port+"/healthz") {
		t.Errorf("HEALTHCHECK %v: want /gateway --probe http://127.0.0.1:%s/healthz", hc, port)
	}
}

// joinFlagValues turns ["--listen", "x"] into ["--listen=x"].
func joinFlagValues(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") && !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, args[i]+"="+args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// Every goroutine the tests started has ended.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// flagLine matches a flag in the flag package's usage output.
var flagLine = regexp.MustCompile(`(?m)^\s+-([A-Za-z0-9][A-Za-z0-9-]*)`)

// acceptedFlags is the set of flags `gateway -h` lists.
func acceptedFlags(t *testing.T, bin string) map[string]bool {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-h")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gateway -h: %v\n%s", err, stderr.String())
	}
	flags := map[string]bool{}
	for _, m := range flagLine.FindAllStringSubmatch(stderr.String(), -1) {
		flags[m[1]] = true
	}
	for _, must := range []string{"backend", "listen", "probe"} {
		if !flags[must] {
			t.Fatalf("gateway -h lists no -%s; parsing its output failed:\n%s", must, stderr.String())
		}
	}
	return flags
}

// servedPaths runs the gateway (fronting its bundled demo backend) and
// returns the probe paths that answer 200 once it is ready, checking on
// the way that --probe exits 0 on a live path and 1 on a missing one.
func servedPaths(t *testing.T, bin string) map[string]bool {
	t.Helper()
	g := testkit.StartGateway(t, bin, "--listen", "127.0.0.1:0")
	defer g.Stop()
	base := g.Base

	get := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Readiness follows start-up by a discovery of the demo backend; once
	// the gateway says it is ready, every path it serves answers.
	testkit.WaitFor(t, "the gateway's /readyz to answer 200", func() bool { return get("/readyz") == http.StatusOK })
	served := map[string]bool{}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		served[path] = get(path) == http.StatusOK
	}
	if !served["/healthz"] {
		t.Fatal("a running gateway does not answer /healthz")
	}
	for path, want := range map[string]int{"/healthz": 0, "/no-such-path": 1} {
		if code := runProbe(bin, base+path); code != want {
			t.Errorf("gateway --probe %s: exit %d, want %d", base+path, code, want)
		}
	}
	return served
}

func runProbe(bin, url string) int {
	err := exec.Command(bin, "--probe", url).Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestSidecarRuns runs sidecar.yaml's two containers as processes, with
// their own arguments (the socket directory moved to a temporary one, the
// gateway's listeners to free loopback ports): the gateway discovers the
// zoo over the unix socket and /readyz says so.
func TestSidecarRuns(t *testing.T) {
	bin := testkit.GatewayBinary(t)
	zooBin := testkit.ZooBinary(t)
	var d object
	for _, o := range load(t, "sidecar.yaml") {
		if o.Kind == "Deployment" {
			d = o
		}
	}
	gw := gatewayContainer(t, d)
	socket, ok := strings.CutPrefix(argValue(gw.Args, "backend"), "unix://")
	if !ok {
		t.Fatalf("sidecar.yaml: the gateway's --backend is not a unix socket")
	}
	dir := t.TempDir()
	moved := func(args []string) []string {
		out := make([]string, 0, len(args))
		for _, a := range args {
			out = append(out, strings.ReplaceAll(a, filepath.Dir(socket), dir))
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "gateway" {
			continue
		}
		zoo := exec.CommandContext(ctx, zooBin, moved(c.Args)...)
		zoo.Cancel = func() error { return zoo.Process.Signal(syscall.SIGTERM) }
		if err := zoo.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = zoo.Process.Signal(syscall.SIGTERM)
			_ = zoo.Wait()
		}()
	}
	var args []string
	for _, a := range moved(gw.Args) {
		switch name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name {
		case "listen":
			a = "--listen=127.0.0.1:0"
		case "admin-listen":
			continue // /readyz then answers on --listen
		}
		args = append(args, a)
	}
	g := testkit.StartGateway(t, bin, args...)
	defer g.Stop()
	base := g.Base
	// The zoo may come up after the gateway, as in a Pod: the gateway
	// retries discovery, and readiness follows.
	var body []byte
	testkit.WaitFor(t, "the gateway to become ready over the unix socket", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if !bytes.Contains(body, []byte(`"discovered":true`)) || !bytes.Contains(body, []byte(`"serving":1`)) {
		t.Errorf("/readyz: %s, want the backend discovered with its one replica serving", body)
	}
}

// TestFleetRuns runs redis.yaml's Redis (Debian's redis-server, which
// make test installs, with the manifest's arguments and a password in
// place of the Secret) and two gateways with shared.yaml's arguments (the
// backend, files and listeners moved to the test's): both become ready,
// with /readyz saying the shared store is up, and a session opened on one
// is ended on both by DELETE through the other.
func TestFleetRuns(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed (make test installs it: apt-get install redis-server)")
	}
	bin := testkit.GatewayBinary(t)
	zooBin := testkit.ZooBinary(t)
	deployment := func(file string) container {
		for _, o := range load(t, file) {
			if o.Kind == "Deployment" {
				return o.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatalf("%s: no Deployment", file)
		return container{}
	}
	dir := t.TempDir()
	password := "test-password-0123456789"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	redisPort := testkit.FreePort(t)
	var redisArgs []string
	for _, a := range deployment("redis.yaml").Args {
		redisArgs = append(redisArgs, strings.ReplaceAll(a, "$(REDIS_PASSWORD)", password))
	}
	redisArgs = append(redisArgs, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--dir", dir)
	redis := exec.CommandContext(ctx, "redis-server", redisArgs...)
	var redisLog bytes.Buffer
	redis.Stdout, redis.Stderr = &redisLog, &redisLog
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = redis.Process.Kill()
		_ = redis.Wait()
		if t.Failed() {
			t.Logf("redis-server:\n%s", redisLog.String())
		}
	}()

	zooPort := testkit.FreePort(t)
	zoo := exec.CommandContext(ctx, zooBin, "--listen", fmt.Sprintf("127.0.0.1:%d", zooPort))
	zoo.Cancel = func() error { return zoo.Process.Signal(syscall.SIGTERM) }
	if err := zoo.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = zoo.Process.Signal(syscall.SIGTERM)
		_ = zoo.Wait()
	}()

	files := map[string]string{
		"session-secret-file": strings.Repeat("s", 48),
		"bearer-tokens-file":  "fleet-token-0123456789",
		"state-password-file": password,
	}
	var args []string
	for _, a := range deployment("shared.yaml").Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "listen":
			a = "--listen=127.0.0.1:0"
		case "backend":
			a = fmt.Sprintf("--backend=127.0.0.1:%d", zooPort)
		case "state":
			a = fmt.Sprintf("--state=redis://127.0.0.1:%d/0", redisPort)
		case "session-secret-file", "bearer-tokens-file", "state-password-file":
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(files[name]+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			a = "--" + name + "=" + path
		}
		args = append(args, a)
	}
	var bases []string
	for range 2 {
		g := testkit.StartGateway(t, bin, args...)
		defer g.Stop()
		bases = append(bases, g.Base)
	}
	for _, base := range bases {
		var body []byte
		testkit.WaitFor(t, "the gateway to become ready with the shared store up", func() bool {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"state":{"up":true,"revocationsLoaded":true}`))
		})
	}
	// A session opened on one replica, deleted through the other, is gone
	// on both.
	token := testkit.Bearer(files["bearer-tokens-file"])
	first := &testkit.Client{URL: bases[0] + "/mcp", Header: token}
	if err := first.Initialize(ctx, "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	other := &testkit.Client{URL: bases[1] + "/mcp", Header: token, SessionID: first.SessionID, Version: first.Version}
	if resp, err := other.Do(ctx, http.MethodDelete, nil, nil); err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE through the other replica: %+v %v", resp, err)
	}
	for i, base := range bases {
		c := &testkit.Client{URL: base + "/mcp", Header: token, SessionID: first.SessionID, Version: first.Version}
		resp, err := c.Post(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusNotFound {
			t.Errorf("replica %d answered the deleted session with %d, want 404", i, resp.Status)
		}
	}
}
