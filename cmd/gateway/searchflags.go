package main

import (
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
			return settingErrorf("%s and %s need %s URL", flagName("search-embeddings-model"), flagName("search-embeddings-key-file"), flagName("search-embeddings"))
		}
		return nil
	}
	if s.model == "" {
		return settingErrorf("%s: required with %s (the model name the endpoint serves)", flagName("search-embeddings-model"), flagName("search-embeddings"))
	}
	if s.keyFile != "" {
		b, err := os.ReadFile(s.keyFile)
		if err != nil {
			return settingErrorf("%s: %w", flagName("search-embeddings-key-file"), err)
		}
		if s.key = strings.TrimSpace(string(b)); s.key == "" {
			return settingErrorf("%s %s: the file is empty", flagName("search-embeddings-key-file"), s.keyFile)
		}
		if strings.ContainsFunc(s.key, unicode.IsControl) {
			return settingErrorf("%s %s: holds more than one line or a control character; the file must hold the key alone", flagName("search-embeddings-key-file"), s.keyFile)
		}
	}
	if _, err := embeddings.New(embeddings.Options{URL: s.embeddingsURL, Model: s.model, APIKey: s.key}); err != nil {
		return settingErrorf("%s: %w", flagName("search-embeddings"), err)
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
