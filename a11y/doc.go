// Package a11y decides what a screen reader hears while an answer streams:
// the speech projection of the rendered markdown, a streaming sentence
// segmenter that emits a sentence only once its end is confirmed, and the
// announcer policy (merge, pace, final status).
//
// It never calls JavaScript; package wasm puts its announcements into the
// page's live regions.
package a11y
