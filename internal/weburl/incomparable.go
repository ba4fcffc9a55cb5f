package weburl

// incomparable, as a struct's first field (it takes no room there), makes
// the struct not comparable with ==, so the compiler generates no
// equality function for it: a struct with strings that is allocated or
// boxed carries one in its type data, linked into the widget's .wasm
// whether or not anything compares it (issue 34, "Lighter";
// wasm/internal/build's TestTheDefaultWidgetLinksNoneOfTheHeavyFunctionsItDropped
// keeps them out).
type incomparable [0]func()
