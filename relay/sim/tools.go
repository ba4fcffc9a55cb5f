package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Tool is a function the request declares (OpenAI's tools[].function): the
// simulated model calls only these, as a real model does, with arguments
// valid against Parameters (a JSON Schema; empty means any object).
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Weather is the tool the canned tool-call answer wants: declare it (in
// Params.Tools, or as the request's tools) to have the model call it.
var Weather = Tool{
	Name:        "get_weather",
	Description: "The current weather in a place.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"location":{"type":"string","description":"City and country, e.g. Lyon, France"},` +
		`"unit":{"type":"string","enum":["celsius","fahrenheit"]},` +
		`"include_forecast":{"type":"boolean"}},"required":["location"],"additionalProperties":false}`),
}

// Tool choices besides a tool's name (OpenAI's tool_choice).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// noToolText is what the model says when the answer would call a tool that
// the request did not declare: a real model cannot call what it was not
// given, and the developer reads why.
const noToolText = "I cannot look that up: this request declares no tool for it, so I answer without one. " +
	"Declare a tool in the request's `tools` (for example `get_weather`, with a JSON Schema for its parameters) and I will call it.\n"

// toolish matches a declared tool that fits the canned tool-call answer
// (a weather question) by its name or description.
var toolish = regexp.MustCompile(`(?i)weather|forecast|temperature`)

// withTools makes the answer's tool call one the request allows: the call
// goes to a declared tool (the one named by choice, the canned one, or one
// that fits), with arguments generated from its schema; with no such tool
// it is dropped and the text says so. A choice of "required" or a tool's
// name makes even an answer without a call call one, as the API forces.
func withTools(a Answer, tools []Tool, choice string) Answer {
	forced := choice == ToolChoiceRequired || (choice != "" && choice != ToolChoiceAuto && choice != ToolChoiceNone)
	if a.Tool == nil && !forced {
		return a
	}
	var pick *Tool
	if choice != ToolChoiceNone {
		for i := range tools {
			t := &tools[i]
			switch {
			case forced && choice != ToolChoiceRequired:
				if t.Name == choice {
					pick = t
				}
			case a.Tool != nil && t.Name == a.Tool.Name:
				pick = t
			case pick == nil && a.Tool != nil && (toolish.MatchString(t.Name) || toolish.MatchString(t.Description)):
				pick = t
			}
		}
		if pick == nil && choice == ToolChoiceRequired && len(tools) > 0 {
			pick = &tools[0]
		}
	}
	if pick == nil {
		if a.Tool != nil {
			a.Tool = nil
			a.Text = noToolText
		}
		return a
	}
	var canned map[string]any
	if a.Tool != nil {
		json.Unmarshal([]byte(a.Tool.Arguments), &canned)
	} else {
		a.Text = "" // a forced call: the model answers with the call alone
	}
	args, err := Arguments(pick.Parameters, canned)
	if err != nil {
		// A schema the model cannot satisfy: it answers without the call.
		a.Tool, a.Text = nil, "I could not call `"+pick.Name+"`: "+err.Error()+".\n"
		return a
	}
	a.Tool = &ToolCall{ID: "call_trickle_" + safeID(pick.Name) + "_0", Name: pick.Name, Arguments: args}
	return a
}

func safeID(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}

// schema is the part of JSON Schema the simulated model reads to make
// arguments and checks them against.
type schema struct {
	Type                 json.RawMessage            `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Items                json.RawMessage            `json:"items"`
	Enum                 []json.RawMessage          `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	Minimum              *float64                   `json:"minimum"`
	Maximum              *float64                   `json:"maximum"`
	ExclusiveMinimum     *float64                   `json:"exclusiveMinimum"`
	ExclusiveMaximum     *float64                   `json:"exclusiveMaximum"`
	MinLength            *int                       `json:"minLength"`
	MaxLength            *int                       `json:"maxLength"`
	MinItems             *int                       `json:"minItems"`
	MaxItems             *int                       `json:"maxItems"`
	Default              json.RawMessage            `json:"default"`
}

func parseSchema(raw json.RawMessage) (schema, error) {
	var s schema
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "true" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("its schema is not a JSON Schema object: %w", err)
	}
	return s, nil
}

// types lists the schema's types ("type": "x" or ["x", "y"]); none means any.
func (s schema) types() []string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil && one != "" {
		return []string{one}
	}
	var many []string
	json.Unmarshal(s.Type, &many)
	return many
}

// Arguments makes a JSON object valid against the parameters' schema:
// canned values where they fit, else the schema's const, enum, default
// or a plain value of its type within its bounds. Required properties are
// always there; optional ones only when a canned value fits.
func Arguments(parameters json.RawMessage, canned map[string]any) (string, error) {
	s, err := parseSchema(parameters)
	if err != nil {
		return "", err
	}
	if ts := s.types(); len(ts) > 0 && !contains(ts, "object") {
		return "", fmt.Errorf("its parameters' schema is of type %v, not an object", ts)
	}
	v, err := gen(s, canned, "", 0)
	if err != nil {
		return "", err
	}
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{}
	}
	b, _ := json.Marshal(v)
	if err := Validate(parameters, b); err != nil {
		return "", fmt.Errorf("no arguments fit its schema (%w)", err)
	}
	return string(b), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func gen(s schema, canned any, name string, depth int) (any, error) {
	if depth > 16 {
		return nil, fmt.Errorf("its schema nests deeper than 16 levels")
	}
	raw := func(r json.RawMessage) any {
		var v any
		json.Unmarshal(r, &v)
		return v
	}
	if len(s.Const) > 0 {
		return raw(s.Const), nil
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if canned != nil && jsonEqual(raw(e), canned) {
				return canned, nil
			}
		}
		return raw(s.Enum[0]), nil
	}
	if alts := append(s.AnyOf, s.OneOf...); len(alts) > 0 {
		sub, err := parseSchema(alts[0])
		if err != nil {
			return nil, err
		}
		return gen(sub, canned, name, depth+1)
	}
	ts := s.types()
	typ := ""
	for _, t := range ts {
		if t != "null" {
			typ = t
			break
		}
	}
	if typ == "" && len(ts) > 0 {
		return nil, nil
	}
	if typ == "" {
		switch canned.(type) {
		case string:
			typ = "string"
		case bool:
			typ = "boolean"
		case float64:
			typ = "number"
		case map[string]any:
			typ = "object"
		default:
			if len(s.Properties) > 0 {
				typ = "object"
			} else {
				typ = "string"
			}
		}
	}
	if len(s.Default) > 0 && canned == nil {
		canned = raw(s.Default)
	}
	switch typ {
	case "object":
		m, _ := canned.(map[string]any)
		out := map[string]any{}
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cv, has := m[k]
			if !has && !contains(s.Required, k) {
				continue
			}
			sub, err := parseSchema(s.Properties[k])
			if err != nil {
				return nil, err
			}
			v, err := gen(sub, cv, k, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		if s.Properties == nil && string(s.AdditionalProperties) != "false" {
			for k, v := range m { // an open object: the canned values as they are
				out[k] = v
			}
		}
		for _, k := range s.Required {
			if _, ok := out[k]; !ok {
				out[k] = "example" // required but undescribed: any value
			}
		}
		return out, nil
	case "array":
		n := 0
		if s.MinItems != nil {
			n = *s.MinItems
		}
		item, err := parseSchema(s.Items)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, err := gen(item, nil, name, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "boolean":
		if b, ok := canned.(bool); ok {
			return b, nil
		}
		return true, nil
	case "integer", "number":
		v, ok := canned.(float64)
		if !ok {
			v = 1
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if s.Minimum != nil {
			lo = *s.Minimum
		}
		if s.ExclusiveMinimum != nil {
			lo = math.Max(lo, *s.ExclusiveMinimum+1)
		}
		if s.Maximum != nil {
			hi = *s.Maximum
		}
		if s.ExclusiveMaximum != nil {
			hi = math.Min(hi, *s.ExclusiveMaximum-1)
		}
		v = math.Min(math.Max(v, lo), hi)
		if typ == "integer" {
			v = math.Ceil(v)
		}
		return v, nil
	case "null":
		return nil, nil
	}
	// string
	v, ok := canned.(string)
	if !ok {
		switch n := strings.ToLower(name); {
		case strings.Contains(n, "location") || strings.Contains(n, "city") || strings.Contains(n, "place"):
			v = "Lyon, France"
		case strings.Contains(n, "unit"):
			v = "celsius"
		default:
			v = "example"
		}
	}
	if s.MaxLength != nil && utf8.RuneCountInString(v) > *s.MaxLength {
		v = string([]rune(v)[:*s.MaxLength])
	}
	if s.MinLength != nil {
		for utf8.RuneCountInString(v) < *s.MinLength {
			v += "x"
		}
	}
	return v, nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Validate checks a JSON value against the part of JSON Schema the model
// reads (type, const, enum, anyOf/oneOf, properties, required,
// additionalProperties, items and the bounds), naming the first breach.
func Validate(schemaJSON json.RawMessage, value []byte) error {
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return validate(schemaJSON, v, "arguments", 0)
}

func validate(raw json.RawMessage, v any, at string, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s: schema nests too deep", at)
	}
	if string(raw) == "false" {
		return fmt.Errorf("%s: not allowed", at)
	}
	s, err := parseSchema(raw)
	if err != nil {
		return err
	}
	if len(s.Const) > 0 {
		var c any
		json.Unmarshal(s.Const, &c)
		if !jsonEqual(c, v) {
			return fmt.Errorf("%s: must be %s", at, s.Const)
		}
	}
	if len(s.Enum) > 0 {
		ok := false
		for _, e := range s.Enum {
			var c any
			json.Unmarshal(e, &c)
			ok = ok || jsonEqual(c, v)
		}
		if !ok {
			return fmt.Errorf("%s: not one of the enum's values", at)
		}
	}
	if len(s.AnyOf) > 0 || len(s.OneOf) > 0 {
		ok := false
		for _, alt := range append(s.AnyOf, s.OneOf...) {
			ok = ok || validate(alt, v, at, depth+1) == nil
		}
		if !ok {
			return fmt.Errorf("%s: matches none of its alternatives", at)
		}
	}
	if ts := s.types(); len(ts) > 0 && !contains(ts, typeOf(v)) && !(typeOf(v) == "integer" && contains(ts, "number")) {
		return fmt.Errorf("%s: is %s, not %s", at, typeOf(v), strings.Join(ts, " or "))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range s.Required {
			if _, ok := x[k]; !ok {
				return fmt.Errorf("%s: lacks the required %q", at, k)
			}
		}
		for k, pv := range x {
			if sub, ok := s.Properties[k]; ok {
				if err := validate(sub, pv, at+"."+k, depth+1); err != nil {
					return err
				}
			} else if string(s.AdditionalProperties) == "false" {
				return fmt.Errorf("%s: has %q, which the schema does not allow", at, k)
			} else if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
				if err := validate(s.AdditionalProperties, pv, at+"."+k, depth+1); err != nil {
					return err
				}
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fmt.Errorf("%s: fewer than %d items", at, *s.MinItems)
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return fmt.Errorf("%s: more than %d items", at, *s.MaxItems)
		}
		for i, it := range x {
			if len(s.Items) > 0 {
				if err := validate(s.Items, it, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
					return err
				}
			}
		}
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s: length %d out of bounds", at, n)
		}
	case float64:
		if s.Minimum != nil && x < *s.Minimum || s.Maximum != nil && x > *s.Maximum ||
			s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum || s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum {
			return fmt.Errorf("%s: %v out of bounds", at, x)
		}
	}
	return nil
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}
