package zoo

import (
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
)

// The seed is fixed data, not generated, so that every start of the zoo
// answers the same way and tests can name animals ("leo") directly.

func date(y int, m time.Month, d int) *timestamppb.Timestamp {
	return timestamppb.New(time.Date(y, m, d, 9, 0, 0, 0, time.UTC))
}

func seedEnclosures() []*zoov1.Enclosure {
	return []*zoov1.Enclosure{
		{Id: "coast", DisplayName: "Penguin Coast", Habitat: zoov1.Habitat_HABITAT_COAST, Capacity: 6, AreaM2: 800},
		{Id: "forest", DisplayName: "Bamboo Forest", Habitat: zoov1.Habitat_HABITAT_FOREST, Capacity: 2, AreaM2: 450.5},
		{Id: "savanna", DisplayName: "African Savanna", Habitat: zoov1.Habitat_HABITAT_SAVANNA, Capacity: 4, AreaM2: 12000},
	}
}

func seedAnimals() []*zoov1.Animal {
	vaccination, err := anypb.New(&zoov1.Vaccination{Vaccine: "avian influenza", DoseMl: 0.5, NextDueTime: date(2026, time.March, 1)})
	if err != nil {
		panic(err) // a generated message always marshals
	}
	return []*zoov1.Animal{
		{
			Id: "ellie", DisplayName: "Ellie", Species: zoov1.Species_SPECIES_ELEPHANT, Diet: zoov1.Animal_DIET_HERBIVORE,
			BirthTime: date(1998, time.May, 4), WeightKg: 4100, Endangered: true, MicrochipId: 900118000123456,
			Tags:            []string{"matriarch"},
			Labels:          map[string]string{"keeper": "amara"},
			WeightKgByYear:  map[int32]float64{2023: 4050, 2024: 4120, 2025: 4100},
			Housing:         &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
			DailyFeedings:   wrapperspb.Int32(5),
			FeedingInterval: durationpb.New(3 * time.Hour),
			ArrivalTime:     date(2004, time.June, 1),
		},
		{
			Id: "gerry", DisplayName: "Gerry", Species: zoov1.Species_SPECIES_GIRAFFE, Diet: zoov1.Animal_DIET_HERBIVORE,
			BirthTime: date(2016, time.August, 19), WeightKg: 1180, MicrochipId: 900118000234567,
			Labels:      map[string]string{"keeper": "amara"},
			Housing:     &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
			ArrivalTime: date(2017, time.January, 10),
		},
		{
			Id: "leo", DisplayName: "Leo", Species: zoov1.Species_SPECIES_LION, Diet: zoov1.Animal_DIET_CARNIVORE,
			BirthTime: date(2015, time.March, 14), WeightKg: 190.5, Endangered: true, MicrochipId: 900118000345678,
			Tags:           []string{"crowd-favourite", "loud"},
			Labels:         map[string]string{"keeper": "jonas", "sponsor": "acme"},
			WeightKgByYear: map[int32]float64{2024: 188, 2025: 190.5},
			Housing:        &zoov1.Animal_EnclosureId{EnclosureId: "savanna"},
			Attributes: mustStruct(map[string]any{
				"favourite_toy": "ball",
				"mane":          map[string]any{"colour": "dark", "full": true},
				"roars_per_day": 12,
				"rivals":        []any{"gerry"},
			}),
			DailyFeedings:   wrapperspb.Int32(2),
			FeedingInterval: durationpb.New(12 * time.Hour),
			ArrivalTime:     date(2016, time.April, 2),
		},
		{
			Id: "mara", DisplayName: "Mara", Species: zoov1.Species_SPECIES_LION, Diet: zoov1.Animal_DIET_CARNIVORE,
			BirthTime: date(2021, time.November, 30), WeightKg: 126, Endangered: true,
			Housing: &zoov1.Animal_Quarantine{Quarantine: &zoov1.Quarantine{
				Reason: "new arrival health check", EndTime: date(2026, time.January, 15),
			}},
			ArrivalTime: date(2025, time.December, 1),
		},
		{
			Id: "pingu", DisplayName: "Pingu", Species: zoov1.Species_SPECIES_PENGUIN, Diet: zoov1.Animal_DIET_PISCIVORE,
			BirthTime: date(2019, time.February, 2), WeightKg: 4.2, MicrochipId: 900118000456789,
			Tags:    []string{"chick-of-2019"},
			Housing: &zoov1.Animal_EnclosureId{EnclosureId: "coast"},
			MedicalRecords: []*zoov1.MedicalRecord{{
				VisitTime: date(2025, time.March, 1),
				Vet:       &zoov1.Vet{Name: "Dr. Ines Okafor", PhoneNumbers: []string{"+44 20 7946 0000"}},
				Notes:     "healthy; vaccinated",
				Details:   vaccination,
			}},
			ArrivalTime: date(2019, time.February, 2),
		},
		{
			Id: "ruby", DisplayName: "Ruby", Species: zoov1.Species_SPECIES_RED_PANDA, Diet: zoov1.Animal_DIET_OMNIVORE,
			BirthTime: date(2020, time.June, 21), WeightKg: 5.6, Endangered: true,
			Housing: &zoov1.Animal_Loan{Loan: &zoov1.Loan{
				PartnerZoo: "Alpine Wildlife Park", ReturnTime: date(2027, time.June, 1),
			}},
			ArrivalTime: date(2020, time.September, 9),
		},
	}
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err) // the seed only uses JSON-compatible values
	}
	return s
}

// taxonomy returns a fresh copy of the tree, so callers may prune it.
func taxonomy() *zoov1.Taxon {
	sp := func(name, common string, s zoov1.Species) *zoov1.Taxon {
		return &zoov1.Taxon{Name: name, Rank: zoov1.Taxon_RANK_SPECIES, CommonName: common, Species: s}
	}
	node := func(rank zoov1.Taxon_Rank, name string, children ...*zoov1.Taxon) *zoov1.Taxon {
		return &zoov1.Taxon{Name: name, Rank: rank, Children: children}
	}
	return node(zoov1.Taxon_RANK_KINGDOM, "Animalia",
		node(zoov1.Taxon_RANK_CLASS, "Aves",
			node(zoov1.Taxon_RANK_ORDER, "Sphenisciformes",
				node(zoov1.Taxon_RANK_FAMILY, "Spheniscidae",
					sp("Spheniscus humboldti", "Humboldt penguin", zoov1.Species_SPECIES_PENGUIN)))),
		node(zoov1.Taxon_RANK_CLASS, "Mammalia",
			node(zoov1.Taxon_RANK_ORDER, "Artiodactyla",
				node(zoov1.Taxon_RANK_FAMILY, "Giraffidae",
					sp("Giraffa camelopardalis", "Giraffe", zoov1.Species_SPECIES_GIRAFFE))),
			node(zoov1.Taxon_RANK_ORDER, "Carnivora",
				node(zoov1.Taxon_RANK_FAMILY, "Ailuridae",
					sp("Ailurus fulgens", "Red panda", zoov1.Species_SPECIES_RED_PANDA)),
				node(zoov1.Taxon_RANK_FAMILY, "Felidae",
					sp("Panthera leo", "Lion", zoov1.Species_SPECIES_LION))),
			node(zoov1.Taxon_RANK_ORDER, "Proboscidea",
				node(zoov1.Taxon_RANK_FAMILY, "Elephantidae",
					sp("Loxodonta africana", "African bush elephant", zoov1.Species_SPECIES_ELEPHANT)))))
}
