package zoo

import (
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
)

// ErrorDomain is the ErrorInfo domain of every error the zoo returns, so a
// client can tell the zoo's reasons from those of a proxy in between.
const ErrorDomain = "zoo.example.com"

// Reasons carried in ErrorInfo.reason. They are stable: clients may branch
// on them.
const (
	ReasonAnimalNotFound      = "ANIMAL_NOT_FOUND"
	ReasonAnimalExists        = "ANIMAL_ALREADY_EXISTS"
	ReasonInvalidArgument     = "INVALID_ARGUMENT"
	ReasonEnclosureFull       = "ENCLOSURE_FULL"
	ReasonAnimalOnLoan        = "ANIMAL_ON_LOAN"
	ReasonFeedingLimitReached = "FEEDING_LIMIT_REACHED"
)

// zooError builds a status error whose details are the given ones followed
// by an ErrorInfo, the order AIP-193 clients expect to scan.
func zooError(code codes.Code, reason string, meta map[string]string, msg string, details ...protoadapt.MessageV1) error {
	details = append(details, &errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain, Metadata: meta})
	st, err := status.New(code, msg).WithDetails(details...)
	if err != nil {
		// Only an unmarshalable detail fails, and ours are plain messages;
		// the bare status still tells the client what went wrong.
		return status.Error(code, msg)
	}
	return st.Err()
}

func errAnimalNotFound(id string) error {
	return zooError(codes.NotFound, ReasonAnimalNotFound, map[string]string{"animal_id": id},
		fmt.Sprintf("animal %q not found", id),
		&errdetails.ResourceInfo{
			ResourceType: "zoo.v1.Animal",
			ResourceName: "animals/" + id,
			Description:  "no animal has this id; ListAnimals shows the ids in use",
		})
}

// violations accumulates BadRequest field violations so a request with
// several mistakes reports them all at once.
type violations []*errdetails.BadRequest_FieldViolation

func (v *violations) add(field, format string, args ...any) {
	*v = append(*v, &errdetails.BadRequest_FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was added.
func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	msg := v[0].Field + ": " + v[0].Description
	if len(v) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(v)-1)
	}
	return zooError(codes.InvalidArgument, ReasonInvalidArgument, nil, msg, &errdetails.BadRequest{FieldViolations: v})
}

func errOnLoan(a *zoov1.Animal, action string) error {
	loan := a.GetLoan()
	desc := fmt.Sprintf("animal is on loan to %s", loan.GetPartnerZoo())
	if loan.GetReturnTime() != nil {
		desc += " until " + loan.GetReturnTime().AsTime().Format(time.DateOnly)
	}
	return zooError(codes.FailedPrecondition, ReasonAnimalOnLoan, map[string]string{"animal_id": a.GetId()},
		fmt.Sprintf("cannot %s %q: %s", action, a.GetId(), desc),
		&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{
			Type:        "LOAN",
			Subject:     "animals/" + a.GetId(),
			Description: desc,
		}}})
}

func errEnclosureFull(enclosureID string, capacity int32) error {
	return zooError(codes.FailedPrecondition, ReasonEnclosureFull,
		map[string]string{"enclosure_id": enclosureID, "capacity": fmt.Sprint(capacity)},
		fmt.Sprintf("enclosure %q is full (capacity %d)", enclosureID, capacity),
		&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{
			Type:        "CAPACITY",
			Subject:     "enclosures/" + enclosureID,
			Description: fmt.Sprintf("the enclosure holds at most %d animals; choose another or move an animal out", capacity),
		}}})
}

func errFeedingLimit(id string, limit int32, retryAfter time.Duration) error {
	return zooError(codes.ResourceExhausted, ReasonFeedingLimitReached,
		map[string]string{"animal_id": id, "daily_limit": fmt.Sprint(limit)},
		fmt.Sprintf("animal %q was already fed %d times today", id, limit),
		&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
			Subject:     "animals/" + id,
			Description: fmt.Sprintf("at most %d feedings per day (Animal.daily_feedings)", limit),
		}}})
}

func errAlreadyExists(id string) error {
	return zooError(codes.AlreadyExists, ReasonAnimalExists, map[string]string{"animal_id": id},
		fmt.Sprintf("animal %q already exists", id),
		&errdetails.ResourceInfo{
			ResourceType: "zoo.v1.Animal",
			ResourceName: "animals/" + id,
			Description:  "the id is taken; pass a different animal_id",
		})
}
