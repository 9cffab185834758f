// Writes goQuoteTable.json: Go's own strconv.Quote (fmt's %q) of the strings in goQuote.test.ts's
// table, and which code points Go's unicode.IsPrint rejects, as expected values for
// src/api/goQuote.ts. Run with any Go toolchain (the table was made with Debian's golang-go):
//
//	go run test/api/goQuoteTable.go > test/api/goQuoteTable.json
package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

type quoteCase struct {
	Name   string `json:"name"`
	Input  string `json:"input"`
	Quoted string `json:"quoted"`
}

type table struct {
	Go      string      `json:"go"`
	Unicode string      `json:"unicode"`
	Cases   []quoteCase `json:"cases"`
	// Assigned code points (below 0x20000, surrogates aside) that Go escapes, and those Go's tables
	// leave unassigned (a newer Unicode may assign them, so they are not compared), as [from, to].
	NotPrintable [][2]rune `json:"notPrintable"`
	Unassigned   [][2]rune `json:"unassigned"`
}

func ranges(keep func(rune) bool) [][2]rune {
	var out [][2]rune
	for r := rune(0); r < 0x20000; r++ {
		if r >= 0xd800 && r <= 0xdfff || !keep(r) {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == r-1 {
			out[n-1][1] = r
		} else {
			out = append(out, [2]rune{r, r})
		}
	}
	return out
}

func assigned(r rune) bool {
	for _, t := range unicode.Categories {
		if unicode.Is(t, r) {
			return true
		}
	}
	return false
}

// asciiJSON escapes every non-ASCII character as \uXXXX (UTF-16), so the file shows no raw controls.
func asciiJSON(v any) string {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	for _, r := range string(raw) {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, "\\u%04x", u)
		}
	}
	return b.String()
}

func main() {
	inputs := []struct{ name, in string }{
		{"empty", ""},
		{"plain reference", "registry.example.com:5000/team/app:v1.2"},
		{"quote and backslash", `say "hi" \ bye`},
		{"named escapes", "\a\b\f\n\r\t\v"},
		{"terminal title escape", "nginx\x1b]0;pwned\x07:latest"},
		{"NUL, ESC and DEL", "a\x00b\x1bc\x7fd"},
		{"C1 controls", "x\u0080\u0085\u009by"},
		{"bidi overrides", "a\u202ab\u202bc\u202cd\u202de\u202ef"},
		{"bidi isolates", "\u2066\u2067\u2068\u2069"},
		{"zero-width and BOM", "a\u200bb\u200cc\u200dd\u200ee\u200ff\u2060g\ufeffh"},
		{"line and paragraph separators", "a\u2028b\u2029c"},
		{"no-break and ideographic space", "a\u00a0b\u3000c"},
		{"soft hyphen", "co\u00adop"},
		{"private use and unassigned", "\ue000\u0378"},
		{"astral non-printable", "\U000e0001\U000f0000"},
		{"printable non-ASCII", "café 東京 Ωμέγα ü"},
		{"emoji", "👍🏽 👨‍👩‍👧 🇫🇷"},
		{"replacement character", "\ufffd"},
		{"combining marks", "e\u0301"},
	}
	t := table{Go: runtime.Version(), Unicode: unicode.Version}
	for _, c := range inputs {
		t.Cases = append(t.Cases, quoteCase{c.name, c.in, fmt.Sprintf("%q", c.in)})
	}
	t.NotPrintable = ranges(func(r rune) bool { return assigned(r) && !strconv.IsPrint(r) })
	t.Unassigned = ranges(func(r rune) bool { return !assigned(r) })
	// One [from, to] pair a line: the file stays short and diffs stay readable.
	out := asciiJSON(t)
	for _, key := range []string{"notPrintable", "unassigned"} {
		var list [][2]rune
		if key == "notPrintable" {
			list = t.NotPrintable
		} else {
			list = t.Unassigned
		}
		pairs := make([]string, len(list))
		for i, p := range list {
			pairs[i] = fmt.Sprintf("[%d, %d]", p[0], p[1])
		}
		start := strings.Index(out, "\""+key+"\": [")
		end := start + strings.Index(out[start:], "\n  ]") + len("\n  ]")
		out = out[:start] + "\"" + key + "\": [\n    " + strings.Join(pairs, ",\n    ") + "\n  ]" + out[end:]
	}
	fmt.Println(out)
}
