//go:build !linux

package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// hasEpoll reports whether the epoll client exists here: it is Linux-only;
// elsewhere the load generator runs the goroutine client.
const hasEpoll = false

type epollClient struct{}

func newEpollClient(int, time.Time) (*epollClient, error) {
	return nil, errors.New("the epoll client is Linux-only: use -client goroutine")
}

func (*epollClient) start(context.Context, string, string, *streamRec, *atomic.Int64, *atomic.Int64, func(error)) {
}

func (*epollClient) close() {}
