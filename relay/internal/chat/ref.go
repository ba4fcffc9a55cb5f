package chat

import (
	"net/url"
	"strings"
)

// StreamRef is where stream id lives (GET to resume, DELETE to stop), as
// a reference relative to the request's path: "../streams/ID" from
// /v1/chat/completions. Resolved by the client against the URL it asked,
// it names the stream wherever the relay's API is mounted, under
// http.StripPrefix or behind a proxy that serves it under a path, with no
// setting that tells the relay its public prefix (docs/embedding.md).
func StreamRef(reqPath, id string) string {
	return relativePath(reqPath, "/v1/streams/"+url.PathEscape(id))
}

// relativePath is a relative reference from the absolute path base to the
// absolute path target (RFC 3986 section 5.2: base's last segment is
// dropped, each ".." climbs one segment).
func relativePath(base, target string) string {
	b := strings.Split(strings.TrimPrefix(base, "/"), "/")
	b = b[:len(b)-1] // base's directories
	t := strings.Split(strings.TrimPrefix(target, "/"), "/")
	n := 0
	for n < len(b) && n < len(t)-1 && b[n] == t[n] {
		n++
	}
	var sb strings.Builder
	for range len(b) - n {
		sb.WriteString("../")
	}
	rest := strings.Join(t[n:], "/")
	if sb.Len() == 0 && strings.Contains(strings.SplitN(rest, "/", 2)[0], ":") {
		sb.WriteString("./") // a first segment with a colon would read as a scheme
	}
	sb.WriteString(rest)
	return sb.String()
}
