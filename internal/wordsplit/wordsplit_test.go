package wordsplit

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	var (
		describe = Rules{Digits: DigitsJoin, Acronyms: true}
		tokens   = Rules{Digits: DigitsApart, Acronyms: true}
		ident    = Rules{Digits: DigitsDrop, ASCII: true}
	)
	for _, tc := range []struct {
		in    string
		rules Rules
		want  []string
	}{
		{"GetHTTPRouteV1beta2", describe, []string{"get", "http", "route", "v1beta2"}},
		{"GetHTTPRouteV1beta2", tokens, []string{"get", "http", "route", "v", "1", "beta", "2"}},
		{"GetHTTPRouteV1beta2", ident, []string{"get", "httproute", "v", "beta"}},
		{"ipv6_address", describe, []string{"ipv6", "address"}},
		{"V1Beta", describe, []string{"v1", "beta"}},
		{"google.cloud.compute.v1", tokens, []string{"google", "cloud", "compute", "v", "1"}},
		{"ContentAddressableStorage", ident, []string{"content", "addressable", "storage"}},
		{"ÄpfelBirnen", describe, []string{"äpfel", "birnen"}},
		{"ÄpfelBirnen", ident, []string{"pfel", "birnen"}},
		{"", describe, nil},
		{"--", tokens, nil},
	} {
		if got := Split(tc.in, tc.rules); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q, %+v) = %q, want %q", tc.in, tc.rules, got, tc.want)
		}
	}
}
