// Package render turns a growing markdown answer into DOM patches. Blocks
// that no continuation of the text can change are rendered once and never
// touched again; only the live tail after them is re-parsed and re-rendered.
// The settled HTML plus the tail HTML always equals a one-shot goldmark
// render of the same text. The link and image safety policy lives here.
//
// It never calls JavaScript; package wasm applies its patches.
package render
