// Package stream gives a model's streamed answer its meaning: one event
// model (text, thinking, tool-call deltas, usage, finish, error, end marker)
// and one decoder per provider dialect, auto-detection, and the Answer that
// accumulates them with its status.
//
// It never touches the DOM or the network.
package stream
