package render_test

import (
	"fmt"
	"strings"

	"github.com/trickle-dev/trickle/render"
)

// A Document turns the growing answer into two patches per frame: HTML to
// append once (blocks that can no longer change) and HTML that replaces the
// live tail.
func ExampleDocument() {
	doc, err := render.NewDocument()
	if err != nil {
		fmt.Println(err)
		return
	}
	var page strings.Builder // what the DOM holds before the live tail

	for _, text := range []string{
		"# Plan\n\nFirst, mea",
		"# Plan\n\nFirst, measure.\n\n- profile",
		"# Plan\n\nFirst, measure.\n\n- profile\n- fix the hot path\n",
	} {
		f := doc.Update(text)
		page.WriteString(f.Append)
		fmt.Printf("append %q\ntail   %q\n", f.Append, f.Tail)
	}
	f := doc.Finish()
	page.WriteString(f.Append)
	fmt.Printf("final  %q\n", f.Append)
	whole, err := render.Convert("# Plan\n\nFirst, measure.\n\n- profile\n- fix the hot path\n")
	fmt.Println(page.String() == whole, err)
	// Output:
	// append "<h1>Plan</h1>\n"
	// tail   "<p>First, mea</p>\n"
	// append "<p>First, measure.</p>\n"
	// tail   "<ul>\n<li>profile</li>\n</ul>\n"
	// append ""
	// tail   "<ul>\n<li>profile</li>\n<li>fix the hot path</li>\n</ul>\n"
	// final  "<ul>\n<li>profile</li>\n<li>fix the hot path</li>\n</ul>\n"
	// true <nil>
}

// Convert renders in one go, with the same configuration and safety policy:
// raw HTML is omitted, unsafe links become text, third-party images become
// links.
func ExampleConvert() {
	html, err := render.Convert("[x](javascript:alert(1)) ![chart](https://evil.example/c.png?q=secret) <b>hi</b>")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(html)
	// Output:
	// <p>x <a href="https://evil.example/c.png?q=secret" rel="noopener noreferrer nofollow ugc">chart</a> <!-- raw HTML omitted -->hi<!-- raw HTML omitted --></p>
}

// A policy entry that is not what its field holds is refused by name,
// not skipped.
func ExampleWithPolicy() {
	_, err := render.NewDocument(render.WithPolicy(render.Policy{AllowedImageOrigins: []string{"cdn.example"}}))
	fmt.Println(err)
	// Output:
	// render: bad option: WithPolicy (AllowedImageOrigins)("cdn.example"): not an origin (want scheme://host[:port])
}

// Each frame's tail becomes a patch against the one before: a paragraph
// whose text only grew gets the new text appended in place; one whose text
// changed at its end ("wor" became emphasis) keeps the text node, trims
// what changed (3 UTF-16 code units) and adds the new nodes after it.
func ExampleTailDiffer() {
	var d render.TailDiffer
	for _, tail := range []string{"<p>Hello</p>\n", "<p>Hello, wor</p>\n", "<p>Hello, <em>world</em></p>\n"} {
		p := d.Diff(tail)
		fmt.Printf("path %v keep %d trim %d text %q html %q\n", p.Path, p.Keep, p.Trim, p.Text, p.HTML)
	}
	// Output:
	// path [] keep 0 trim 0 text "" html "<p>Hello</p>\n"
	// path [0] keep 1 trim 0 text ", wor" html ""
	// path [0] keep 1 trim 3 text "" html "<em>world</em>"
}
