package zoo_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var now = time.Date(2026, time.January, 10, 12, 0, 0, 0, time.UTC)

// newClient starts a fresh zoo with a fixed clock, so state and timestamps
// are the same on every run.
func newClient(t *testing.T) zoov1.ZooServiceClient {
	t.Helper()
	addr := zootest.Start(t, zoo.WithClock(func() time.Time { return now }))
	return zoov1.NewZooServiceClient(zootest.Dial(t, addr))
}

// wantStatus checks err's code, ErrorInfo reason and the types of its other
// details, and returns the details for closer checks.
func wantStatus(t *testing.T, err error, code codes.Code, reason string, detailTypes ...proto.Message) []any {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("code = %v (%v), want %v", st.Code(), err, code)
	}
	details := st.Details()
	var gotTypes, wantTypes []string
	for _, d := range details {
		gotTypes = append(gotTypes, string(d.(proto.Message).ProtoReflect().Descriptor().FullName()))
	}
	for _, d := range append(detailTypes, &errdetails.ErrorInfo{}) {
		wantTypes = append(wantTypes, string(d.ProtoReflect().Descriptor().FullName()))
	}
	if diff := cmp.Diff(wantTypes, gotTypes); diff != "" {
		t.Errorf("detail types (-want +got):\n%s", diff)
	}
	info, _ := details[len(details)-1].(*errdetails.ErrorInfo)
	if info.GetReason() != reason || info.GetDomain() != zoo.ErrorDomain {
		t.Errorf("ErrorInfo = %v, want reason %s in %s", info, reason, zoo.ErrorDomain)
	}
	return details
}

func TestGetAnimal(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	resp, err := c.GetAnimal(t.Context(), &zoov1.GetAnimalRequest{Id: "leo"})
	if err != nil {
		t.Fatal(err)
	}
	if a := resp.GetAnimal(); a.GetDisplayName() != "Leo" || a.GetEnclosureId() != "savanna" || a.GetAttributes().GetFields()["favourite_toy"].GetStringValue() != "ball" {
		t.Errorf("unexpected leo: %v", a)
	}

	_, err = c.GetAnimal(t.Context(), &zoov1.GetAnimalRequest{Id: "nemo"})
	d := wantStatus(t, err, codes.NotFound, zoo.ReasonAnimalNotFound, &errdetails.ResourceInfo{})
	if got := d[0].(*errdetails.ResourceInfo).GetResourceName(); got != "animals/nemo" {
		t.Errorf("ResourceInfo.resource_name = %q", got)
	}
}

func TestListAnimals(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	var ids []string
	tok := ""
	for page := 0; ; page++ {
		resp, err := c.ListAnimals(t.Context(), &zoov1.ListAnimalsRequest{PageSize: 4, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetTotalSize() != 6 {
			t.Errorf("total_size = %d, want 6", resp.GetTotalSize())
		}
		for _, a := range resp.GetAnimals() {
			ids = append(ids, a.GetId())
		}
		if tok = resp.GetNextPageToken(); tok == "" {
			break
		}
	}
	if diff := cmp.Diff([]string{"ellie", "gerry", "leo", "mara", "pingu", "ruby"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}

	resp, err := c.ListAnimals(t.Context(), &zoov1.ListAnimalsRequest{Species: []zoov1.Species{zoov1.Species_SPECIES_LION}, EnclosureId: "savanna"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetAnimals()) != 1 || resp.GetAnimals()[0].GetId() != "leo" {
		t.Errorf("lions in the savanna = %v, want leo", resp.GetAnimals())
	}

	_, err = c.ListAnimals(t.Context(), &zoov1.ListAnimalsRequest{PageSize: 500, PageToken: "garbage!", Species: []zoov1.Species{0}})
	d := wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
	var fields []string
	for _, v := range d[0].(*errdetails.BadRequest).GetFieldViolations() {
		fields = append(fields, v.GetField())
	}
	if diff := cmp.Diff([]string{"species[0]", "page_size", "page_token"}, fields); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestCreateUpdateDeleteAnimal(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := t.Context()
	created, err := c.CreateAnimal(ctx, &zoov1.CreateAnimalRequest{Animal: &zoov1.Animal{
		DisplayName: "Nala Two", Species: zoov1.Species_SPECIES_LION,
		Housing: &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := &zoov1.Animal{
		Id: "nala-two", DisplayName: "Nala Two", Species: zoov1.Species_SPECIES_LION,
		Housing:     &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
		ArrivalTime: timestamppb.New(now),
	}
	if diff := cmp.Diff(want, created.GetAnimal(), protocmp.Transform()); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}

	// The savanna (capacity 4) is now full.
	_, err = c.CreateAnimal(ctx, &zoov1.CreateAnimalRequest{AnimalId: "kiara", Animal: &zoov1.Animal{
		DisplayName: "Kiara", Species: zoov1.Species_SPECIES_LION, Housing: &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
	}})
	wantStatus(t, err, codes.FailedPrecondition, zoo.ReasonEnclosureFull, &errdetails.PreconditionFailure{})

	_, err = c.CreateAnimal(ctx, &zoov1.CreateAnimalRequest{Animal: &zoov1.Animal{DisplayName: "Leo", Species: zoov1.Species_SPECIES_LION}})
	wantStatus(t, err, codes.AlreadyExists, zoo.ReasonAnimalExists, &errdetails.ResourceInfo{})

	_, err = c.CreateAnimal(ctx, &zoov1.CreateAnimalRequest{AnimalId: "Bad Id", Animal: &zoov1.Animal{
		WeightKg: -1, DailyFeedings: wrapperspb.Int32(0), Housing: &zoov1.Animal_EnclosureId{EnclosureId: "moon"},
	}})
	d := wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
	if n := len(d[0].(*errdetails.BadRequest).GetFieldViolations()); n != 6 {
		t.Errorf("got %d violations, want 6: %v", n, d[0])
	}

	upd := &zoov1.UpdateAnimalRequest{
		Animal:     &zoov1.Animal{Id: "nala-two", DisplayName: "Nala", Tags: []string{"new"}, DailyFeedings: wrapperspb.Int32(4), WeightKg: 99},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"display_name", "tags", "daily_feedings"}},
	}
	for range 2 { // idempotent
		got, err := c.UpdateAnimal(ctx, upd)
		if err != nil {
			t.Fatal(err)
		}
		a := got.GetAnimal()
		if a.GetDisplayName() != "Nala" || !slices.Equal(a.GetTags(), []string{"new"}) || a.GetDailyFeedings().GetValue() != 4 || a.GetWeightKg() != 0 {
			t.Errorf("updated animal = %v", a)
		}
	}
	_, err = c.UpdateAnimal(ctx, &zoov1.UpdateAnimalRequest{Animal: &zoov1.Animal{Id: "leo"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"species"}}})
	wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
	_, err = c.UpdateAnimal(ctx, &zoov1.UpdateAnimalRequest{
		Animal:     &zoov1.Animal{Id: "ruby", Housing: &zoov1.Animal_EnclosureId{EnclosureId: "forest"}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"enclosure_id"}},
	})
	wantStatus(t, err, codes.FailedPrecondition, zoo.ReasonAnimalOnLoan, &errdetails.PreconditionFailure{})

	if _, err := c.DeleteAnimal(ctx, &zoov1.DeleteAnimalRequest{Id: "nala-two"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteAnimal(ctx, &zoov1.DeleteAnimalRequest{Id: "nala-two"})
	wantStatus(t, err, codes.NotFound, zoo.ReasonAnimalNotFound, &errdetails.ResourceInfo{})
	_, err = c.DeleteAnimal(ctx, &zoov1.DeleteAnimalRequest{Id: "ruby"})
	wantStatus(t, err, codes.FailedPrecondition, zoo.ReasonAnimalOnLoan, &errdetails.PreconditionFailure{})
}

func TestFeedAnimal(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := t.Context()
	next, err := c.GetNextFeedingTime(ctx, &zoov1.GetNextFeedingTimeRequest{AnimalId: "leo"})
	if err != nil || !next.AsTime().Equal(now) {
		t.Errorf("next feeding before any = %v, %v; want now", next, err)
	}
	// Leo may be fed twice a day.
	for i, req := range []*zoov1.FeedAnimalRequest{
		{AnimalId: "leo", Food: &zoov1.FeedAnimalRequest_Ration{Ration: "meat"}},
		{AnimalId: "leo", Food: &zoov1.FeedAnimalRequest_Meal{Meal: &zoov1.Meal{GramsByItem: map[string]int64{"beef": 4000, "bone": 500}}}},
	} {
		resp, err := c.FeedAnimal(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetFeeding().GetSequence() != int32(i+1) || resp.GetRemainingToday() != int32(1-i) {
			t.Errorf("feeding %d = %v", i, resp)
		}
	}
	_, err = c.FeedAnimal(ctx, &zoov1.FeedAnimalRequest{AnimalId: "leo", Food: &zoov1.FeedAnimalRequest_Ration{Ration: "meat"}})
	d := wantStatus(t, err, codes.ResourceExhausted, zoo.ReasonFeedingLimitReached, &errdetails.RetryInfo{}, &errdetails.QuotaFailure{})
	if got := d[0].(*errdetails.RetryInfo).GetRetryDelay().AsDuration(); got != 12*time.Hour {
		t.Errorf("retry delay = %v, want 12h (until midnight UTC)", got)
	}
	next, err = c.GetNextFeedingTime(ctx, &zoov1.GetNextFeedingTimeRequest{AnimalId: "leo"})
	if err != nil || !next.AsTime().Equal(now.Add(12*time.Hour)) {
		t.Errorf("next feeding = %v, %v; want now+12h", next, err)
	}

	_, err = c.FeedAnimal(ctx, &zoov1.FeedAnimalRequest{AnimalId: "gerry", Food: &zoov1.FeedAnimalRequest_Meal{Meal: &zoov1.Meal{GramsByItem: map[string]int64{"hay": -1}}}})
	wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
	_, err = c.FeedAnimal(ctx, &zoov1.FeedAnimalRequest{AnimalId: "ruby", Food: &zoov1.FeedAnimalRequest_Ration{Ration: "bamboo"}})
	wantStatus(t, err, codes.FailedPrecondition, zoo.ReasonAnimalOnLoan, &errdetails.PreconditionFailure{})
	_, err = c.GetNextFeedingTime(ctx, &zoov1.GetNextFeedingTimeRequest{AnimalId: "ruby"})
	wantStatus(t, err, codes.FailedPrecondition, zoo.ReasonAnimalOnLoan, &errdetails.PreconditionFailure{})
}

func TestEnclosuresAndTaxonomy(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	enc, err := c.ListEnclosures(t.Context(), &zoov1.ListEnclosuresRequest{Habitat: zoov1.Habitat_HABITAT_SAVANNA})
	if err != nil {
		t.Fatal(err)
	}
	if len(enc.GetEnclosures()) != 1 || !slices.Equal(enc.GetEnclosures()[0].GetAnimalIds(), []string{"ellie", "gerry", "leo"}) {
		t.Errorf("savanna enclosures = %v", enc)
	}

	depth := func(t *zoov1.Taxon) int {
		var f func(*zoov1.Taxon) int
		f = func(t *zoov1.Taxon) int {
			d := 0
			for _, c := range t.GetChildren() {
				d = max(d, f(c))
			}
			return d + 1
		}
		return f(t)
	}
	for _, tc := range []struct{ maxDepth, want int }{{0, 5}, {1, 2}, {3, 4}} {
		resp, err := c.GetTaxonomy(t.Context(), &zoov1.GetTaxonomyRequest{MaxDepth: int32(tc.maxDepth)})
		if err != nil {
			t.Fatal(err)
		}
		if got := depth(resp.GetRoot()); got != tc.want {
			t.Errorf("max_depth %d: tree has %d levels, want %d", tc.maxDepth, got, tc.want)
		}
	}
	_, err = c.GetTaxonomy(t.Context(), &zoov1.GetTaxonomyRequest{MaxDepth: -1})
	wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
}

func TestStreams(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := t.Context()

	t.Run("WatchFeedings", func(t *testing.T) {
		stream, err := c.WatchFeedings(ctx, &zoov1.WatchFeedingsRequest{Count: 3, Interval: durationpb.New(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, resp.GetFeeding().GetAnimalId()+":"+resp.GetFeeding().GetRation())
		}
		if diff := cmp.Diff([]string{"ellie:hay", "gerry:hay", "leo:meat"}, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		bad, err := c.WatchFeedings(ctx, &zoov1.WatchFeedingsRequest{Count: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.Recv()
		wantStatus(t, err, codes.InvalidArgument, zoo.ReasonInvalidArgument, &errdetails.BadRequest{})
	})

	t.Run("RecordObservations", func(t *testing.T) {
		stream, err := c.RecordObservations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []*zoov1.Observation{
			{AnimalId: "leo", ActivityLevel: 2, Note: "asleep in the sun"},
			{AnimalId: "pingu", ActivityLevel: 9, Measurements: map[string]float64{"temperature_c": 39}},
			{AnimalId: "leo", ActivityLevel: 4},
		} {
			if err := stream.Send(&zoov1.RecordObservationsRequest{Observation: o}); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := stream.CloseAndRecv()
		if err != nil {
			t.Fatal(err)
		}
		want := &zoov1.RecordObservationsResponse{RecordedCount: 3, CountByAnimal: map[string]int32{"leo": 2, "pingu": 1}, MeanActivityLevel: 5}
		if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
	})

	t.Run("ChatWithKeeper", func(t *testing.T) {
		stream, err := c.ChatWithKeeper(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []*zoov1.ChatWithKeeperRequest{
			{AnimalId: "pingu", Question: "What does he eat?"},
			{AnimalId: "ruby", Question: "Where is she?"},
		} {
			if err := stream.Send(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, resp.GetAnswer())
		}
		if diff := cmp.Diff([]string{"Pingu gets fish.", "Ruby is on loan to Alpine Wildlife Park."}, got); diff != "" {
			t.Errorf("answers (-want +got):\n%s", diff)
		}
	})
}

func TestServeHealthAndStop(t *testing.T) {
	t.Parallel()
	addr, stop, err := zoo.Listen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	conn := zootest.Dial(t, addr)
	resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: zoo.ServiceName})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, %v; want SERVING", resp, err)
	}

	// A long watch must not hold up the stop.
	stream, err := zoov1.NewZooServiceClient(conn).WatchFeedings(t.Context(), &zoov1.WatchFeedingsRequest{Count: 100, Interval: durationpb.New(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stop took %v with a stream open", d)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("stream after stop: %v, want Unavailable", err)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

func TestServeCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	_, stop, err := zoo.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := stop(); err != nil {
		t.Errorf("stop after cancel: %v", err)
	}
}
