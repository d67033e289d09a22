//go:build !race

package estate_test

const raceEnabled = false
