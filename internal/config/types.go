package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// wrongType explains a decoding error at key as a value of the wrong
// type, in words: "implement.budget must be a number, got a string
// \"two\"". It reports false when the error is something else (the key is
// not one of Config's, or the value does have the expected kind), so the
// caller keeps the decoder's own message.
func wrongType(key []string, data []byte) (string, bool) {
	want, ok := typeAt(reflect.TypeFor[Config](), key)
	if !ok {
		return "", false
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return "", false
	}
	got, ok := valueAt(doc, key)
	if !ok {
		return "", false
	}
	expected, fits := describeType(want, got)
	if fits {
		return "", false
	}
	// Values under providers may be API keys, under notify a webhook
	// URL with its token: never repeat them.
	secret := key[0] == "providers" || key[0] == "notify"
	return fmt.Sprintf("%s must be %s, got %s", keyName(key), expected, describeValue(got, secret)), true
}

// typeAt follows key through Config's toml tags to the Go type it decodes
// into.
func typeAt(t reflect.Type, key []string) (reflect.Type, bool) {
	for _, part := range key {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			found := false
			for i := range t.NumField() {
				f := t.Field(i)
				if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == part {
					t, found = f.Type, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, true
}

// valueAt follows key through a generically decoded document.
func valueAt(doc map[string]any, key []string) (any, bool) {
	var v any = doc
	for _, part := range key {
		table, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = table[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// describeType names what t takes, in words, and reports whether v (as
// decoded generically) is of that kind.
func describeType(t reflect.Type, v any) (string, bool) {
	switch t.Kind() {
	case reflect.String:
		_, ok := v.(string)
		return "a string", ok
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
			return "a number", true
		}
		return "a number", false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, ok := v.(int64)
		return "a whole number", ok
	case reflect.Bool:
		_, ok := v.(bool)
		return "true or false", ok
	case reflect.Struct, reflect.Map:
		_, ok := v.(map[string]any)
		return "a table", ok
	case reflect.Slice, reflect.Array:
		_, ok := v.([]any)
		return "an array", ok
	}
	return "a " + t.String(), false
}

// describeValue says what v is, with the value itself when it is short
// and not secret.
func describeValue(v any, secret bool) string {
	switch x := v.(type) {
	case string:
		if secret {
			return "a string"
		}
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return fmt.Sprintf("a string %q", x)
	case int64:
		return fmt.Sprintf("a number %d", x)
	case float64:
		return fmt.Sprintf("a number %v", x)
	case bool:
		return fmt.Sprintf("a boolean %v", x)
	case time.Time:
		return "a date and time " + x.Format(time.RFC3339)
	case toml.LocalDateTime:
		return "a date and time " + x.String()
	case toml.LocalDate:
		return "a date " + x.String()
	case toml.LocalTime:
		return "a time " + x.String()
	case map[string]any:
		return "a table"
	case []any:
		for _, e := range x {
			if _, ok := e.(map[string]any); !ok {
				return "an array"
			}
		}
		if len(x) > 0 {
			return "an array of tables"
		}
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// keyName writes a key path as in TOML, quoting the parts that are not
// bare keys: prices."openai:gpt-4.1".input.
func keyName(key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = k
		if k == "" || strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			parts[i] = fmt.Sprintf("%q", k)
		}
	}
	return strings.Join(parts, ".")
}
