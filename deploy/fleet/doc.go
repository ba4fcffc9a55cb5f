// Package fleet holds a fleet of Trickle relays for a person to try
// (run.sh, `make fleet`): a redis-server, three `trickle serve --store
// redis://…` instances and nginx round-robin in front of them (fleet.conf),
// on loopback, with no sticky sessions. Its test streams through that very
// script in headless Chromium and shows an answer surviving a reconnect
// that lands on another instance.
//
// It has no Go API.
package fleet
