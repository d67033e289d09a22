package zoo

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
)

const (
	defaultWatchCount    = 5
	maxWatchCount        = 1000
	defaultWatchInterval = 100 * time.Millisecond
	maxWatchInterval     = 10 * time.Second
)

var rationByDiet = map[zoov1.Animal_Diet]string{
	zoov1.Animal_DIET_CARNIVORE:   "meat",
	zoov1.Animal_DIET_HERBIVORE:   "hay",
	zoov1.Animal_DIET_OMNIVORE:    "bamboo and fruit",
	zoov1.Animal_DIET_PISCIVORE:   "fish",
	zoov1.Animal_DIET_UNSPECIFIED: "mixed ration",
}

// WatchFeedings implements zoo.v1.ZooService. The events are synthetic: the
// i-th event feeds the i-th animal in id order (or the requested one), and
// its time is the start time plus i intervals, so the stream depends only on
// the request and the clock.
func (s *Server) WatchFeedings(req *zoov1.WatchFeedingsRequest, stream grpc.ServerStreamingServer[zoov1.WatchFeedingsResponse]) error {
	var v violations
	count := req.GetCount()
	switch {
	case count == 0:
		count = defaultWatchCount
	case count < 0 || count > maxWatchCount:
		v.add("count", "must be between 1 and %d (0 means %d), got %d", maxWatchCount, defaultWatchCount, count)
	}
	interval := defaultWatchInterval
	if req.Interval != nil {
		interval = req.GetInterval().AsDuration()
		if interval < 0 || interval > maxWatchInterval || req.GetInterval().CheckValid() != nil {
			v.add("interval", "must be between 0s and %s", maxWatchInterval)
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	s.mu.Lock()
	var animals []*zoov1.Animal
	if id := req.GetAnimalId(); id != "" {
		a, ok := s.animals[id]
		if !ok {
			s.mu.Unlock()
			return errAnimalNotFound(id)
		}
		animals = append(animals, a)
	} else {
		for _, id := range s.animalIDs() {
			animals = append(animals, s.animals[id])
		}
	}
	// Only the fields read below are used after unlocking, and animals are
	// replaced, never mutated, so holding the pointers is safe.
	s.mu.Unlock()
	if len(animals) == 0 {
		return nil
	}
	start := s.clock()
	ctx := stream.Context()
	for i := range count {
		if i > 0 && interval > 0 {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return status.FromContextError(ctx.Err()).Err()
			case <-s.closing:
				t.Stop()
				return status.Error(codes.Unavailable, "zoo is shutting down; reconnect to watch again")
			case <-t.C:
			}
		}
		a := animals[int(i)%len(animals)]
		f := &zoov1.Feeding{
			AnimalId: a.GetId(),
			FedTime:  timestamppb.New(start.Add(time.Duration(i) * interval)),
			Food:     &zoov1.Feeding_Ration{Ration: rationByDiet[a.GetDiet()]},
			Sequence: i + 1,
		}
		if err := stream.Send(&zoov1.WatchFeedingsResponse{Feeding: f}); err != nil {
			return err
		}
	}
	return nil
}

// RecordObservations implements zoo.v1.ZooService. An invalid observation
// ends the stream with an error; the ones before it stay recorded.
func (s *Server) RecordObservations(stream grpc.ClientStreamingServer[zoov1.RecordObservationsRequest, zoov1.RecordObservationsResponse]) error {
	resp := &zoov1.RecordObservationsResponse{CountByAnimal: map[string]int32{}}
	var activity float64
	for n := 0; ; n++ {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		o := req.GetObservation()
		if o.GetActivityLevel() > 10 {
			var v violations
			v.add("observation.activity_level", "must be between 0 and 10, got %d (message %d)", o.GetActivityLevel(), n)
			return v.err()
		}
		s.mu.Lock()
		_, ok := s.animals[o.GetAnimalId()]
		if ok {
			s.observations[o.GetAnimalId()]++
		}
		s.mu.Unlock()
		if !ok {
			return errAnimalNotFound(o.GetAnimalId())
		}
		resp.RecordedCount++
		resp.CountByAnimal[o.GetAnimalId()]++
		activity += float64(o.GetActivityLevel())
	}
	if resp.RecordedCount > 0 {
		resp.MeanActivityLevel = activity / float64(resp.RecordedCount)
	}
	return stream.SendAndClose(resp)
}

// ChatWithKeeper implements zoo.v1.ZooService. The keeper answers from the
// animal's record by keyword; an unknown animal gets an answer saying so
// rather than an error, as a person would.
func (s *Server) ChatWithKeeper(stream grpc.BidiStreamingServer[zoov1.ChatWithKeeperRequest, zoov1.ChatWithKeeperResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&zoov1.ChatWithKeeperResponse{Answer: s.answer(req)}); err != nil {
			return err
		}
	}
}

func (s *Server) answer(req *zoov1.ChatWithKeeperRequest) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.animals[req.GetAnimalId()]
	if !ok {
		return fmt.Sprintf("I don't look after anyone called %q.", req.GetAnimalId())
	}
	q := strings.ToLower(req.GetQuestion())
	name := a.GetDisplayName()
	switch {
	case strings.Contains(q, "eat") || strings.Contains(q, "food"):
		return fmt.Sprintf("%s gets %s.", name, rationByDiet[a.GetDiet()])
	case strings.Contains(q, "where"):
		switch h := a.GetHousing().(type) {
		case *zoov1.Animal_EnclosureId:
			return fmt.Sprintf("%s lives in the %s enclosure.", name, h.EnclosureId)
		case *zoov1.Animal_Quarantine:
			return fmt.Sprintf("%s is in quarantine: %s.", name, h.Quarantine.GetReason())
		case *zoov1.Animal_Loan:
			return fmt.Sprintf("%s is on loan to %s.", name, h.Loan.GetPartnerZoo())
		}
		return fmt.Sprintf("I'm not sure where %s is.", name)
	case strings.Contains(q, "weigh"):
		return fmt.Sprintf("%s weighs %g kg.", name, a.GetWeightKg())
	default:
		return fmt.Sprintf("%s is a %s. Ask me what they eat, where they live or how much they weigh.",
			name, strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(a.GetSpecies().String(), "SPECIES_"), "_", " ")))
	}
}
