// Package nginx holds an example nginx configuration for running Trickle's
// relay behind nginx (trickle.conf) and the test that runs that very file
// in a real nginx to show streams pass through one event at a time.
//
// It has no Go API; it never configures nginx for you.
package nginx
