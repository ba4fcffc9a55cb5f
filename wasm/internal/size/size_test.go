package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/wasm/internal/inline"
)

func leb(n int) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func vec(b []byte) []byte { return append(leb(len(b)), b...) }

func section(id byte, payload []byte) []byte { return append([]byte{id}, vec(payload)...) }

// A module written by hand, byte by byte from the binary format's spec:
// two imports (a function and a memory), two defined functions of 3 and
// 130 bytes (a size that takes two LEB128 bytes), a data section and a
// name section naming all three functions.
func handMade() []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, section(1, []byte{1, 0x60, 0, 0})...) // one type: () → ()
	imports := leb(2)
	imports = append(imports, vec([]byte("go"))...)
	imports = append(imports, vec([]byte("debug"))...)
	imports = append(imports, 0, 0) // a function of type 0
	imports = append(imports, vec([]byte("env"))...)
	imports = append(imports, vec([]byte("mem"))...)
	imports = append(imports, 2, 1, 1, 2) // a memory, limits min 1 max 2
	b = append(b, section(2, imports)...)
	b = append(b, section(3, []byte{2, 0, 0})...)
	body1 := []byte{0, 0x01, 0x0b}                   // no locals, nop, end
	body2 := append([]byte{0}, make([]byte, 128)...) // no locals, 127 nops, end
	body2[len(body2)-1] = 0x0b
	for i := 1; i < len(body2)-1; i++ {
		body2[i] = 0x01
	}
	code := leb(2)
	code = append(code, vec(body1)...)
	code = append(code, vec(body2)...)
	b = append(b, section(10, code)...)
	b = append(b, section(11, []byte{1, 0, 0x41, 0, 0x0b, 3, 'a', 'b', 'c'})...)
	names := leb(3)
	for i, n := range []string{"go.debug", "github.com_yuin_goldmark_parser.__blockParser_.Open", "runtime.mallocgc"} {
		names = append(names, leb(i)...)
		names = append(names, vec([]byte(n))...)
	}
	name := vec([]byte("name"))
	name = append(name, 1)
	name = append(name, vec(names)...)
	return append(b, section(0, name)...)
}

func TestAHandMadeModuleIsReadSectionBySection(t *testing.T) {
	m, err := parse(handMade())
	require.NoError(t, err)
	require.Equal(t, 1, m.imported, "the memory import is not a function")
	require.Equal(t, []int{3, 129}, m.code)
	require.Equal(t, map[int]string{0: "go.debug", 1: "github.com_yuin_goldmark_parser.__blockParser_.Open", 2: "runtime.mallocgc"}, m.names)
	require.Equal(t, 9, m.sections["data"])
	require.Equal(t, 1+1+3+1+130, m.sections["code"])

	var out strings.Builder
	pkgs := map[string]string{"github.com_yuin_goldmark": "github.com/yuin/goldmark", "github.com_yuin_goldmark_parser": "github.com/yuin/goldmark/parser", "runtime": "runtime"}
	require.NoError(t, byPackage(&out, m, pkgs, 10))
	require.Contains(t, out.String(), "| github.com/yuin/goldmark/parser | 3 | 2.3 % |", "the first defined function is index 1, after the import")
	require.Contains(t, out.String(), "| runtime | 129 | 97.7 % |")
	require.Contains(t, out.String(), "| goldmark | 3 |")
}

// A binary cut between two sections is a smaller module; cut anywhere
// else it is an error, never a panic or a silent short read.
func TestEveryCutOfAModuleIsAnErrorUnlessItFallsBetweenSections(t *testing.T) {
	b := handMade()
	boundaries := map[int]bool{8: true}
	for off := 8; off < len(b); {
		r := &reader{b: b, off: off + 1}
		size := r.u32()
		off = r.off + size
		boundaries[off] = true
	}
	require.True(t, boundaries[len(b)])
	for n := range len(b) {
		_, err := parse(b[:n])
		if boundaries[n] {
			require.NoError(t, err, "cut at %d, between sections", n)
		} else {
			require.Error(t, err, "cut at %d of %d", n, len(b))
		}
	}
}

func TestASymbolBelongsToTheLongestPackageItStartsWith(t *testing.T) {
	pkgs := map[string]string{}
	for _, p := range []string{"github.com/yuin/goldmark", "github.com/yuin/goldmark/parser", "github.com/trickle-dev/trickle/render", "fmt", "internal/runtime/maps", "runtime"} {
		pkgs[mangle(p)] = p
	}
	for sym, want := range map[string]string{
		"github.com_yuin_goldmark_parser.__blockParser_.Open":            "github.com/yuin/goldmark/parser",
		"github.com_yuin_goldmark.New":                                   "github.com/yuin/goldmark",
		"github.com_trickle_dev_trickle_render.__bufWriter_.WriteString": "github.com/trickle-dev/trickle/render",
		"fmt.__fmt_.pad": "fmt",
		"internal_runtime_maps.__Map_.getWithKey":                  "internal/runtime/maps",
		"runtime.mallocgc":                                         "runtime",
		"type_.eq.github.com_trickle_dev_trickle_render.Extension": "(type equality and hashing)",
		"wasm_export_run":                                          "(other)",
		"":                                                         "(unnamed)",
	} {
		require.Equal(t, want, packageOf(sym, pkgs), sym)
	}
}

func TestNumbersAreWrittenWithThousandsSeparators(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1264531: "1,264,531"} {
		require.Equal(t, want, num(n))
	}
}

// The report measures what ships: every build is compiled with the widget
// build's inlining (wasm/internal/inline), not the compiler's default,
// and its overlay (wasm/internal/stdswap).
func TestTheReportBuildsWithTheWidgetsInlining(t *testing.T) {
	args := strings.Join(buildArgs("-s -w", "-overlay=o.json", "w.wasm", "./wasm/cmd/widget"), " ")
	require.Contains(t, args, "-overlay=o.json", "regexp swapped as in the widget's build")
	require.Contains(t, args, "-gcflags=all=-l")
	for _, f := range inline.Flags() {
		require.Contains(t, args, f)
	}
	require.Contains(t, args, "-trimpath")
}
