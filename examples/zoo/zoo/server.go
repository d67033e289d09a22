// Package zoo is the demo backend of grpc-mcp-gateway: an in-memory
// implementation of the zoo.v1.ZooService API (examples/zoo/proto) and the
// plumbing to serve it with gRPC health and server reflection.
//
// It exists so the gateway has something real to front: its API uses nested
// messages, enums, repeated fields, maps, oneofs, well-known types, a
// recursive message, google.rpc error details and streaming in every
// direction. The state is seeded with the same animals on every start and,
// given a fixed clock (WithClock), every response is deterministic, so tests
// can compare against golden files.
package zoo

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
)

// ServiceName is the full name of the zoo service, as reflection and the
// health service know it.
const ServiceName = "zoo.v1.ZooService"

const (
	defaultDailyFeedings   = 3
	defaultFeedingInterval = 8 * time.Hour
	defaultPageSize        = 10
	maxPageSize            = 100
)

// idPattern is compiled on first use: the gateway links this package for
// --demo, and would otherwise compile it at every start.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`) })

// Option configures a Server and, for Serve and Listen, the gRPC server
// around it.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	clock      func() time.Time
	logger     *slog.Logger
	reflection bool
}

func newConfig(opts []Option) config {
	c := config{clock: time.Now, logger: slog.New(slog.DiscardHandler), reflection: true}
	for _, o := range opts {
		o.apply(&c)
	}
	return c
}

// WithClock replaces the wall clock (the default) with now, so tests get the
// same timestamps on every run. now must be safe for concurrent use.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) { c.clock = now })
}

// WithLogger sends the zoo's logs to l. The default discards them.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithoutReflection leaves server reflection out of Serve and Listen (it is
// on by default), to stand for the backends that do not offer it.
func WithoutReflection() Option {
	return optionFunc(func(c *config) { c.reflection = false })
}

// Server implements zoo.v1.ZooService on in-memory state. It is safe for
// concurrent use; every response is a copy, never a view of the state.
type Server struct {
	zoov1.UnimplementedZooServiceServer

	clock  func() time.Time
	logger *slog.Logger
	// closing is closed when Serve begins to stop, so long-running streams
	// end promptly instead of holding up a graceful stop.
	closing   chan struct{}
	closeOnce sync.Once

	mu           sync.Mutex
	animals      map[string]*zoov1.Animal
	enclosures   map[string]*zoov1.Enclosure
	feedings     map[string][]*zoov1.Feeding // by animal id, oldest first
	observations map[string]int              // count by animal id
}

// NewServer returns a zoo seeded with its usual animals and enclosures.
func NewServer(opts ...Option) *Server {
	c := newConfig(opts)
	return newServer(c)
}

func newServer(c config) *Server {
	s := &Server{
		clock:        c.clock,
		logger:       c.logger,
		closing:      make(chan struct{}),
		animals:      map[string]*zoov1.Animal{},
		enclosures:   map[string]*zoov1.Enclosure{},
		feedings:     map[string][]*zoov1.Feeding{},
		observations: map[string]int{},
	}
	for _, e := range seedEnclosures() {
		s.enclosures[e.GetId()] = e
	}
	for _, a := range seedAnimals() {
		s.animals[a.GetId()] = a
	}
	return s
}

// close ends the streams in progress; it is idempotent.
func (s *Server) close() { s.closeOnce.Do(func() { close(s.closing) }) }

// GetAnimal implements zoo.v1.ZooService.
func (s *Server) GetAnimal(_ context.Context, req *zoov1.GetAnimalRequest) (*zoov1.GetAnimalResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.animals[req.GetId()]
	if !ok {
		return nil, errAnimalNotFound(req.GetId())
	}
	return &zoov1.GetAnimalResponse{Animal: proto.CloneOf(a)}, nil
}

// ListAnimals implements zoo.v1.ZooService.
func (s *Server) ListAnimals(_ context.Context, req *zoov1.ListAnimalsRequest) (*zoov1.ListAnimalsResponse, error) {
	var v violations
	for i, sp := range req.GetSpecies() {
		if sp == zoov1.Species_SPECIES_UNSPECIFIED || zoov1.Species_name[int32(sp)] == "" {
			v.add(fmt.Sprintf("species[%d]", i), "must be a known species other than SPECIES_UNSPECIFIED")
		}
	}
	size := req.GetPageSize()
	switch {
	case size == 0:
		size = defaultPageSize
	case size < 0 || size > maxPageSize:
		v.add("page_size", "must be between 1 and %d (0 means %d), got %d", maxPageSize, defaultPageSize, size)
	}
	offset, ok := decodePageToken(req.GetPageToken())
	if !ok {
		v.add("page_token", "is not a token from a previous ListAnimals response; leave it empty for the first page")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := req.GetEnclosureId(); id != "" && s.enclosures[id] == nil {
		v.add("enclosure_id", "unknown enclosure %q; known: %s", id, strings.Join(s.enclosureIDs(), ", "))
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	var match []*zoov1.Animal
	for _, id := range s.animalIDs() {
		a := s.animals[id]
		if len(req.GetSpecies()) > 0 && !slices.Contains(req.GetSpecies(), a.GetSpecies()) {
			continue
		}
		if req.GetEnclosureId() != "" && a.GetEnclosureId() != req.GetEnclosureId() {
			continue
		}
		match = append(match, a)
	}
	resp := &zoov1.ListAnimalsResponse{TotalSize: int32(len(match))}
	end := min(offset+int(size), len(match))
	for _, a := range match[min(offset, len(match)):end] {
		resp.Animals = append(resp.Animals, proto.CloneOf(a))
	}
	if end < len(match) {
		resp.NextPageToken = encodePageToken(end)
	}
	return resp, nil
}

// Page tokens are opaque to clients so the encoding can change; today they
// are an offset, which is fine for a demo whose data rarely moves.
func encodePageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(offset)))
}

func decodePageToken(tok string) (int, bool) {
	if tok == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 2 || b[0] != 'o' {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[1:]))
	return n, err == nil && n >= 0
}

// CreateAnimal implements zoo.v1.ZooService.
func (s *Server) CreateAnimal(_ context.Context, req *zoov1.CreateAnimalRequest) (*zoov1.CreateAnimalResponse, error) {
	now := s.clock()
	var v violations
	a := req.GetAnimal()
	if a == nil {
		v.add("animal", "is required")
		return nil, v.err()
	}
	a = proto.CloneOf(a)
	if strings.TrimSpace(a.GetDisplayName()) == "" {
		v.add("animal.display_name", "is required")
	}
	if a.GetSpecies() == zoov1.Species_SPECIES_UNSPECIFIED {
		v.add("animal.species", "is required, for example SPECIES_LION")
	}
	if a.GetId() != "" {
		v.add("animal.id", "is assigned by the zoo; use animal_id to choose one")
	}
	validateAnimalFields(&v, a, now)
	id := req.GetAnimalId()
	if id == "" {
		id = slug(a.GetDisplayName())
	} else if !idPattern().MatchString(id) {
		v.add("animal_id", "must match %s, got %q", idPattern(), id)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if e := a.GetEnclosureId(); e != "" && s.enclosures[e] == nil {
		v.add("animal.enclosure_id", "unknown enclosure %q; known: %s", e, strings.Join(s.enclosureIDs(), ", "))
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, taken := s.animals[id]; taken {
		return nil, errAlreadyExists(id)
	}
	if err := s.checkCapacity(a.GetEnclosureId()); err != nil {
		return nil, err
	}
	a.Id = id
	a.ArrivalTime = timestamppb.New(now)
	s.animals[id] = a
	s.logger.Info("animal admitted", "id", id, "species", a.GetSpecies())
	return &zoov1.CreateAnimalResponse{Animal: proto.CloneOf(a)}, nil
}

// validateAnimalFields checks the fields clients may set on create and
// update; the prefix names them as the request does.
func validateAnimalFields(v *violations, a *zoov1.Animal, now time.Time) {
	if a.GetWeightKg() < 0 {
		v.add("animal.weight_kg", "must not be negative, got %g", a.GetWeightKg())
	}
	if a.BirthTime != nil && a.GetBirthTime().AsTime().After(now) {
		v.add("animal.birth_time", "must not be in the future")
	}
	if a.DailyFeedings != nil && (a.GetDailyFeedings().GetValue() < 1 || a.GetDailyFeedings().GetValue() > 10) {
		v.add("animal.daily_feedings", "must be between 1 and 10, got %d", a.GetDailyFeedings().GetValue())
	}
	if a.FeedingInterval != nil && a.GetFeedingInterval().AsDuration() <= 0 {
		v.add("animal.feeding_interval", "must be positive")
	}
	for k := range a.GetLabels() {
		if k == "" {
			v.add("animal.labels", "keys must not be empty")
		}
	}
}

func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	id := strings.TrimRight(b.String(), "-")
	if id == "" || id[0] < 'a' {
		id = "animal-" + id
	}
	return strings.TrimRight(id[:min(len(id), 63)], "-")
}

// checkCapacity reports whether one more animal fits in the enclosure.
// s.mu must be held.
func (s *Server) checkCapacity(enclosureID string) error {
	e := s.enclosures[enclosureID]
	if e == nil {
		return nil
	}
	if n := s.countIn(enclosureID); n >= int(e.GetCapacity()) {
		return errEnclosureFull(enclosureID, e.GetCapacity())
	}
	return nil
}

func (s *Server) countIn(enclosureID string) int {
	n := 0
	for _, a := range s.animals {
		if a.GetEnclosureId() == enclosureID {
			n++
		}
	}
	return n
}

// updatable lists the update_mask paths UpdateAnimal accepts, each with how
// it copies the field.
var updatable = map[string]func(dst, src *zoov1.Animal){
	"display_name":     func(d, s *zoov1.Animal) { d.DisplayName = s.GetDisplayName() },
	"diet":             func(d, s *zoov1.Animal) { d.Diet = s.GetDiet() },
	"weight_kg":        func(d, s *zoov1.Animal) { d.WeightKg = s.GetWeightKg() },
	"tags":             func(d, s *zoov1.Animal) { d.Tags = slices.Clone(s.GetTags()) },
	"labels":           func(d, s *zoov1.Animal) { d.Labels = proto.CloneOf(s).GetLabels() },
	"attributes":       func(d, s *zoov1.Animal) { d.Attributes = proto.CloneOf(s.GetAttributes()) },
	"daily_feedings":   func(d, s *zoov1.Animal) { d.DailyFeedings = proto.CloneOf(s.GetDailyFeedings()) },
	"feeding_interval": func(d, s *zoov1.Animal) { d.FeedingInterval = proto.CloneOf(s.GetFeedingInterval()) },
	"enclosure_id":     func(d, s *zoov1.Animal) { d.Housing = &zoov1.Animal_EnclosureId{EnclosureId: s.GetEnclosureId()} },
}

// UpdateAnimal implements zoo.v1.ZooService.
func (s *Server) UpdateAnimal(_ context.Context, req *zoov1.UpdateAnimalRequest) (*zoov1.UpdateAnimalResponse, error) {
	var v violations
	src := req.GetAnimal()
	if src.GetId() == "" {
		v.add("animal.id", "is required")
	}
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		v.add("update_mask", "must name at least one field, for example \"display_name\"")
	}
	allowed := slices.Sorted(maps.Keys(updatable))
	for i, p := range paths {
		if updatable[p] == nil {
			v.add(fmt.Sprintf("update_mask.paths[%d]", i), "%q cannot be updated; allowed: %s", p, strings.Join(allowed, ", "))
		}
	}
	validateAnimalFields(&v, src, s.clock())
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(paths, "enclosure_id") && s.enclosures[src.GetEnclosureId()] == nil {
		v.add("animal.enclosure_id", "unknown enclosure %q; known: %s", src.GetEnclosureId(), strings.Join(s.enclosureIDs(), ", "))
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	cur, ok := s.animals[src.GetId()]
	if !ok {
		return nil, errAnimalNotFound(src.GetId())
	}
	if slices.Contains(paths, "enclosure_id") && cur.GetEnclosureId() != src.GetEnclosureId() {
		if cur.GetLoan() != nil {
			return nil, errOnLoan(cur, "move")
		}
		if err := s.checkCapacity(src.GetEnclosureId()); err != nil {
			return nil, err
		}
	}
	next := proto.CloneOf(cur)
	for _, p := range paths {
		updatable[p](next, src)
	}
	s.animals[next.GetId()] = next
	return &zoov1.UpdateAnimalResponse{Animal: proto.CloneOf(next)}, nil
}

// DeleteAnimal implements zoo.v1.ZooService.
func (s *Server) DeleteAnimal(_ context.Context, req *zoov1.DeleteAnimalRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.animals[req.GetId()]
	if !ok {
		return nil, errAnimalNotFound(req.GetId())
	}
	if a.GetLoan() != nil {
		return nil, errOnLoan(a, "delete")
	}
	delete(s.animals, a.GetId())
	delete(s.feedings, a.GetId())
	delete(s.observations, a.GetId())
	return &emptypb.Empty{}, nil
}

// FeedAnimal implements zoo.v1.ZooService.
func (s *Server) FeedAnimal(_ context.Context, req *zoov1.FeedAnimalRequest) (*zoov1.FeedAnimalResponse, error) {
	var v violations
	switch food := req.GetFood().(type) {
	case nil:
		v.add("food", "set either ration or meal")
	case *zoov1.FeedAnimalRequest_Ration:
		if strings.TrimSpace(food.Ration) == "" {
			v.add("ration", "must not be empty")
		}
	case *zoov1.FeedAnimalRequest_Meal:
		if len(food.Meal.GetGramsByItem()) == 0 {
			v.add("meal.grams_by_item", "must list at least one item")
		}
		for _, item := range slices.Sorted(maps.Keys(food.Meal.GetGramsByItem())) {
			if g := food.Meal.GetGramsByItem()[item]; g <= 0 || g > 100_000 {
				v.add(fmt.Sprintf("meal.grams_by_item[%q]", item), "must be between 1 and 100000 grams, got %d", g)
			}
		}
	}
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.animals[req.GetAnimalId()]
	if !ok {
		// Unknown animal outranks a bad meal: there is nothing to feed.
		return nil, errAnimalNotFound(req.GetAnimalId())
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if a.GetLoan() != nil {
		return nil, errOnLoan(a, "feed")
	}
	limit := int32(defaultDailyFeedings)
	if a.DailyFeedings != nil {
		limit = a.GetDailyFeedings().GetValue()
	}
	day := now.UTC().Truncate(24 * time.Hour)
	today := int32(0)
	for _, f := range s.feedings[a.GetId()] {
		if !f.GetFedTime().AsTime().Before(day) {
			today++
		}
	}
	if today >= limit {
		return nil, errFeedingLimit(a.GetId(), limit, day.Add(24*time.Hour).Sub(now))
	}
	f := &zoov1.Feeding{AnimalId: a.GetId(), FedTime: timestamppb.New(now), Sequence: today + 1}
	switch food := req.GetFood().(type) {
	case *zoov1.FeedAnimalRequest_Ration:
		f.Food = &zoov1.Feeding_Ration{Ration: food.Ration}
	case *zoov1.FeedAnimalRequest_Meal:
		f.Food = &zoov1.Feeding_Meal{Meal: proto.CloneOf(food.Meal)}
	}
	s.feedings[a.GetId()] = append(s.feedings[a.GetId()], f)
	return &zoov1.FeedAnimalResponse{Feeding: proto.CloneOf(f), RemainingToday: limit - today - 1}, nil
}

// GetNextFeedingTime implements zoo.v1.ZooService.
func (s *Server) GetNextFeedingTime(_ context.Context, req *zoov1.GetNextFeedingTimeRequest) (*timestamppb.Timestamp, error) {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.animals[req.GetAnimalId()]
	if !ok {
		return nil, errAnimalNotFound(req.GetAnimalId())
	}
	if a.GetLoan() != nil {
		return nil, errOnLoan(a, "schedule feeding for")
	}
	fs := s.feedings[a.GetId()]
	if len(fs) == 0 {
		return timestamppb.New(now), nil
	}
	interval := defaultFeedingInterval
	if a.FeedingInterval != nil {
		interval = a.GetFeedingInterval().AsDuration()
	}
	return timestamppb.New(fs[len(fs)-1].GetFedTime().AsTime().Add(interval)), nil
}

// ListEnclosures implements zoo.v1.ZooService.
func (s *Server) ListEnclosures(_ context.Context, req *zoov1.ListEnclosuresRequest) (*zoov1.ListEnclosuresResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &zoov1.ListEnclosuresResponse{}
	for _, id := range s.enclosureIDs() {
		e := s.enclosures[id]
		if req.GetHabitat() != zoov1.Habitat_HABITAT_UNSPECIFIED && e.GetHabitat() != req.GetHabitat() {
			continue
		}
		e = proto.CloneOf(e)
		for _, aid := range s.animalIDs() {
			if s.animals[aid].GetEnclosureId() == id {
				e.AnimalIds = append(e.AnimalIds, aid)
			}
		}
		resp.Enclosures = append(resp.Enclosures, e)
	}
	return resp, nil
}

// GetTaxonomy implements zoo.v1.ZooService.
func (s *Server) GetTaxonomy(_ context.Context, req *zoov1.GetTaxonomyRequest) (*zoov1.GetTaxonomyResponse, error) {
	if d := req.GetMaxDepth(); d < 0 {
		var v violations
		v.add("max_depth", "must not be negative (0 means the whole tree), got %d", d)
		return nil, v.err()
	}
	root := taxonomy()
	if d := req.GetMaxDepth(); d > 0 {
		prune(root, d)
	}
	return &zoov1.GetTaxonomyResponse{Root: root}, nil
}

func prune(t *zoov1.Taxon, depth int32) {
	if depth == 0 {
		t.Children = nil
		return
	}
	for _, c := range t.GetChildren() {
		prune(c, depth-1)
	}
}

// animalIDs returns the ids in order; s.mu must be held.
func (s *Server) animalIDs() []string { return slices.Sorted(maps.Keys(s.animals)) }

// enclosureIDs returns the ids in order; s.mu must be held.
func (s *Server) enclosureIDs() []string { return slices.Sorted(maps.Keys(s.enclosures)) }
