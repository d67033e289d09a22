package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/search/embeddings"
)

// searchFlags configure search mode's optional semantic reranking
// (gateway.SearchEmbeddings).
type searchFlags struct {
	embeddingsURL, model, keyFile string
	// key is keyFile's content, read by check.
	key string
}

func (s *searchFlags) check() error {
	if s.embeddingsURL == "" {
		if s.model != "" || s.keyFile != "" {
			return errors.New("--search-embeddings-model and --search-embeddings-key-file need --search-embeddings URL")
		}
		return nil
	}
	if s.model == "" {
		return errors.New("--search-embeddings-model: required with --search-embeddings (the model name the endpoint serves)")
	}
	if s.keyFile != "" {
		b, err := os.ReadFile(s.keyFile)
		if err != nil {
			return fmt.Errorf("--search-embeddings-key-file: %w", err)
		}
		if s.key = strings.TrimSpace(string(b)); s.key == "" {
			return fmt.Errorf("--search-embeddings-key-file %s: the file is empty", s.keyFile)
		}
		if strings.ContainsFunc(s.key, unicode.IsControl) {
			return fmt.Errorf("--search-embeddings-key-file %s: holds more than one line or a control character; the file must hold the key alone", s.keyFile)
		}
	}
	if _, err := embeddings.New(embeddings.Options{URL: s.embeddingsURL, Model: s.model, APIKey: s.key}); err != nil {
		return fmt.Errorf("--search-embeddings: %w", err)
	}
	return nil
}

// options are the gateway's SearchEmbeddings, nil when not configured.
func (s *searchFlags) options() *gateway.SearchEmbeddings {
	if s.embeddingsURL == "" {
		return nil
	}
	return &gateway.SearchEmbeddings{URL: s.embeddingsURL, Model: s.model, APIKey: s.key}
}
