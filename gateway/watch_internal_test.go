package gateway

import (
	"testing"
	"time"
)

// TestWatchSettings: the options' windows are checked and defaulted
// before the watch package sees them.
func TestWatchSettings(t *testing.T) {
	s, err := newWatchSettings(WatchOptions{Window: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s.Window != 3*time.Minute || s.MaxWindow != 3*time.Minute || !s.ByName {
		t.Errorf("Window 3m alone: got window %s, max %s, by name %v; want 3m, 3m, true", s.Window, s.MaxWindow, s.ByName)
	}
	if _, err := newWatchSettings(WatchOptions{Window: 3 * time.Minute, MaxWindow: time.Minute}); err == nil {
		t.Error("a default window over the maximum was accepted")
	}
	if _, err := newWatchSettings(WatchOptions{Window: -time.Second}); err == nil {
		t.Error("a negative window was accepted")
	}
	if _, err := newWatchSettings(WatchOptions{Methods: []string{""}}); err == nil {
		t.Error("an empty method pattern was accepted")
	}
}
