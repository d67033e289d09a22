package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzBearerHeader: whatever arrives as Authorization, the middleware
// answers 200 or 401 and never panics, and it lets a request in only when
// the header is the "Bearer" scheme (any letter case) followed by exactly
// a token of the file, surrounding spaces aside.
func FuzzBearerHeader(f *testing.F) {
	const token = "s3cret-token"
	for _, s := range []string{
		"Bearer " + token, "bearer " + token, "BEARER  " + token + " ", "Bearer", "Bearer ", "Basic " + token,
		"Bearer " + token + "x", "Bearer\t" + token, "Bearer " + token + "\x00", "", "B", "Bearer \u00e9",
		"Bearer " + token + ", Bearer other",
	} {
		f.Add(s)
	}
	a, _, _ := startBearer(f, token+"\n")
	h := a.Wrap(echo)
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader("{}"))
		r.Header["Authorization"] = []string{v}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := http.StatusUnauthorized
		if len(v) >= 7 && strings.EqualFold(v[:7], "bearer ") && strings.TrimSpace(v[7:]) == token {
			want = http.StatusOK
		}
		if w.Code != want {
			t.Fatalf("Authorization %q: status %d, want %d", v, w.Code, want)
		}
		if w.Code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("Authorization %q: 401 without a Bearer challenge", v)
		}
	})
}
