package element

import (
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/htmlx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/internal/weburl"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// SourcesHTML is the answer's sources part: a heading and a numbered list,
// each source's title (a link to it, when the policy lets its URL be one)
// and its host; "" when there are none. Links carry render.Rel and open
// in a new tab, as no answer link may reach back to the page.
func SourcesHTML(sources []stream.Source, policy render.Policy, w *Strings) string {
	if len(sources) == 0 {
		return ""
	}
	if w == nil {
		w = &English
	}
	var b strings.Builder
	b.WriteString(`<p data-trickle="sources-heading">`)
	b.WriteString(htmlx.Escape(w.Sources))
	b.WriteString(`</p><ol data-trickle="sources-list">`)
	for i, s := range sources {
		n := strconv.Itoa(i + 1)
		host := sourceHost(s.URL)
		title := firstOf(s.Title, s.Filename, host, s.URL, w.Sources+" "+n)
		b.WriteString(`<li data-trickle="source" data-n="` + n + `">`)
		if s.URL != "" && policy.AllowsLink(s.URL) {
			b.WriteString(`<a href="`)
			b.WriteString(htmlx.Escape(s.URL))
			b.WriteString(`" rel="` + render.Rel + `" target="_blank">`)
			b.WriteString(htmlx.Escape(title))
			b.WriteString(`</a>`)
		} else {
			b.WriteString(`<span data-trickle="source-title">`)
			b.WriteString(htmlx.Escape(title))
			b.WriteString(`</span>`)
		}
		if host != "" && host != title {
			b.WriteString(` <span data-trickle="source-host">`)
			b.WriteString(htmlx.Escape(host))
			b.WriteString(`</span>`)
		}
		b.WriteString(`</li>`)
	}
	b.WriteString(`</ol>`)
	return b.String()
}

// sourceHost is the host a source's URL names ("" for none, or for a URL
// that is no web address: a data: URL, a document's).
func sourceHost(u string) string {
	p, ok := weburl.ParseHost(u)
	if !ok || (p.Scheme != "http" && p.Scheme != "https") {
		return ""
	}
	return strings.TrimPrefix(p.Hostname(), "www.")
}

// Markers are the inline markers of an answer's citations: each at the
// end of its passage, labelled with its source's number and linking to the
// source's URL.
func Markers(a *stream.Answer) []render.Marker {
	cites := a.Citations()
	if len(cites) == 0 {
		return nil
	}
	sources := a.Sources()
	ms := make([]render.Marker, 0, len(cites))
	for _, c := range cites {
		m := render.Marker{At: c.End, Label: strconv.Itoa(c.Source)}
		if c.Source >= 1 && c.Source <= len(sources) {
			m.URL = sources[c.Source-1].URL
		}
		ms = append(ms, m)
	}
	return ms
}

// sourcesSaid is what the reader hears of the sources, after the status.
func sourcesSaid(n int, w *Strings) string {
	if n == 0 {
		return ""
	}
	return stdlite.ReplaceAll(w.SourcesSaid, "{count}", strconv.Itoa(n))
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
