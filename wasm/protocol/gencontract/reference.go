package main

import (
	"fmt"
	"strings"

	"github.com/trickle-dev/trickle/wasm/protocol"
)

// The reference pages of the elements (docs/reference): their attribute,
// event and string tables are generated here; the rest of each page
// (methods, properties, metrics, parts) is written by hand and held to the
// code by cmd/trickle's docs tests.
const (
	answerPage = "docs/reference/trickle-answer.md"
	chatPage   = "docs/reference/trickle-chat.md"
)

// chatKeyPrefix starts the string keys of the chat's own words (the
// composer, the turns' labels): its page lists those, and points to the
// answer's page for the rest, which a chat's strings also replace.
const chatKeyPrefix = "chat"

// The markers of a generated table of a reference page. The begin marker
// is also the <!-- reference: KIND --> marker cmd/trickle's docs tests
// find the table by.
func mdBegin(name string) string {
	return "<!-- reference: " + name + " (generated: go generate ./wasm/protocol writes this table from its contract table; do not edit) -->"
}
func mdEnd(name string) string { return "<!-- end of the generated " + name + " -->" }

// replaceMarkdownRegion replaces the lines between a generated table's
// markers in the page at path.
func replaceMarkdownRegion(path, s, name, body string) (string, error) {
	begin, end := mdBegin(name)+"\n", mdEnd(name)+"\n"
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s has no generated table %q (the lines %q and %q)", path, name, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return s[:i+len(begin)] + body + s[j:], nil
}

// cell is text fit for a markdown table's cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// values is an attribute's values as the page writes them: a union of
// string literals as its literals, a boolean as present or absent.
func values(a protocol.Attribute) string {
	switch {
	case a.Bool():
		return "boolean: present or absent"
	case strings.HasPrefix(a.Type, `"`):
		var out []string
		for _, v := range strings.Split(a.Type, "|") {
			out = append(out, "`"+strings.Trim(strings.TrimSpace(v), `"`)+"`")
		}
		return strings.Join(out, ", ")
	}
	return a.Type
}

func (t table) mdAttributes(e protocol.Element) string {
	var b strings.Builder
	if e == protocol.OnChat {
		b.WriteString("| attribute | values | handed to each answer | what it does |\n| --- | --- | --- | --- |\n")
	} else {
		b.WriteString("| attribute | values | what it does |\n| --- | --- | --- |\n")
	}
	for _, a := range t.on(e) {
		if e == protocol.OnChat {
			handed := "no"
			if a.On&protocol.OnAnswer != 0 {
				handed = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", a.Name, cell(values(a)), handed, cell(a.Doc))
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", a.Name, cell(values(a)), cell(a.Doc))
	}
	if e == protocol.OnChat && len(t.Inherited) > 0 {
		var names []string
		for _, n := range t.Inherited {
			names = append(names, "`"+n+"`")
		}
		fmt.Fprintf(&b, "| %s | the global attributes | yes | The answers' language and direction are the chat's. |\n", strings.Join(names, ", "))
	}
	return b.String()
}

func (t table) mdEvents(e protocol.Element) string {
	var b strings.Builder
	b.WriteString("| event | detail | what it says |\n| --- | --- | --- |\n")
	for _, v := range t.events(e) {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", v.Name, v.Detail, cell(v.Doc))
	}
	return b.String()
}

func (t table) mdStrings(keep func(protocol.String) bool) string {
	var b strings.Builder
	b.WriteString("| key | English | where | written by |\n| --- | --- | --- | --- |\n")
	for _, s := range t.Strings {
		if !keep(s) {
			continue
		}
		by := "the page"
		if s.Side == protocol.ByGo {
			by = "Go"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Key, cell(s.English), cell(s.Doc), by)
	}
	return b.String()
}

// referencePages fills the generated tables of the two reference pages.
func (t table) referencePages(read func(path string) ([]byte, error)) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, page := range []struct {
		path    string
		regions map[string]string
	}{
		{answerPage, map[string]string{
			"attributes": t.mdAttributes(protocol.OnAnswer),
			"events":     t.mdEvents(protocol.OnAnswer),
			"strings":    t.mdStrings(func(protocol.String) bool { return true }),
		}},
		{chatPage, map[string]string{
			"attributes": t.mdAttributes(protocol.OnChat),
			"events":     t.mdEvents(protocol.OnChat),
			"strings":    t.mdStrings(func(s protocol.String) bool { return strings.HasPrefix(s.Key, chatKeyPrefix) }),
		}},
	} {
		src, err := read(page.path)
		if err != nil {
			return nil, err
		}
		s := string(src)
		for _, name := range []string{"attributes", "events", "strings"} {
			if s, err = replaceMarkdownRegion(page.path, s, name, page.regions[name]); err != nil {
				return nil, err
			}
		}
		out[page.path] = []byte(s)
	}
	return out, nil
}
