package gemini

import (
	"encoding/json"
	"testing"
)

// FuzzDetails: any google.rpc details list yields a non-negative wait and never panics.
func FuzzDetails(f *testing.F) {
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":"3","nanos":500000000}}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":-5,"nanos":-1}}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		var ds []map[string]any
		if json.Unmarshal([]byte(raw), &ds) != nil {
			return
		}
		if _, d := details(ds); d < 0 {
			t.Fatalf("details(%s) gave a negative wait %v", raw, d)
		}
	})
}
