package state

import "context"

// WithPageHook has the store opened with o run f before each page of its
// reads of the revocations: a test holds a read there to see what the
// replica does meanwhile.
func WithPageHook(o *Options, f func(ctx context.Context, page int)) { o.pageHook = f }

// WithCheckHook has the store opened with o run f after each health
// check, with what Up then reports.
func WithCheckHook(o *Options, f func(up bool)) { o.checkHook = f }
