package testkit

import (
	"bufio"
	"strings"
)

// NextEvent reads the next server-sent event from br, as the gateway
// writes them (an event line, one data line, a blank line), and returns
// its name and data; comments (keepalives) are skipped.
func NextEvent(br *bufio.Reader) (name, data string, err error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		switch line = strings.TrimRight(line, "\r\n"); {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && name != "":
			return name, data, nil
		}
	}
}
