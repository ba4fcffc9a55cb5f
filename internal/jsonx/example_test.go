package jsonx_test

import (
	"fmt"

	"github.com/trickle-dev/trickle/internal/jsonx"
)

type delta struct {
	Content *string
	Index   int
}

var deltaFields = []string{"content", "index"}

func (d *delta) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, deltaFields) {
		case "content":
			r.StrPtr(&d.Content)
		case "index":
			r.Int(&d.Index)
		}
	})
}

func ExampleDecode() {
	var d delta
	err := jsonx.Decode(`{"index":2,"content":"caf\u00e9 \ud83d\ude00","ignored":[1,{}]}`, d.read)
	fmt.Println(*d.Content, d.Index, err)

	err = jsonx.Decode(`{"index":"two"}`, d.read)
	fmt.Println(err)

	err = jsonx.Decode(`{"index":2,}`, d.read)
	fmt.Println(err)
	// Output:
	// café 😀 2 <nil>
	// jsonx: cannot read string as int at byte 9
	// jsonx: invalid character '}' looking for beginning of object key string at byte 11
}

func ExampleAppendString() {
	fmt.Println(string(jsonx.AppendString(nil, "</script> & \"more\"")))
	// Output: "\u003c/script\u003e \u0026 \"more\""
}
