package llm

import (
	"math"
	"testing"
)

func TestPriceLookup(t *testing.T) {
	t.Parallel()
	table := DefaultPrices()
	tests := []struct {
		spec       string
		ok         bool
		input, out float64
	}{
		{"anthropic:claude-sonnet-4-5", true, 3, 15},
		{"anthropic:claude-sonnet-4-5-20250929", true, 3, 15},
		{"anthropic:claude-opus-4-1", true, 15, 75},
		{"anthropic:claude-haiku-4-5", true, 1, 5},
		{"anthropic:claude-3-5-haiku-latest", true, 0.8, 4},
		{"gemini:gemini-2.5-pro", true, 1.25, 10},
		{"gemini:gemini-2.5-flash", true, 0.30, 2.50},
		{"gemini:gemini-2.5-flash-preview-05-20", true, 0.30, 2.50},
		{"gemini:gemini-2.0-flash-001", true, 0.10, 0.40},
		{"openai:gpt-4.1", true, 2, 8},
		{"openai:gpt-4.1-2025-04-14", true, 2, 8},
		{"openai:gpt-4.1-mini", true, 0.40, 1.60},
		{"openai:gpt-4.1-mini-2025-04-14", true, 0.40, 1.60},
		{"openai:gpt-4o", true, 2.50, 10},
		{"openai:o3", true, 2, 8},
		// Different models that merely share a prefix are not priced as their family.
		{"openai:o3-pro", false, 0, 0},
		{"openai:gpt-4o-audio-preview", false, 0, 0},
		{"openai:qwen2.5-coder", false, 0, 0},
		{"openai:qwen2.5-coder:7b", false, 0, 0},
		{"mock:scripted", false, 0, 0},
		{"gemini:gpt-4.1", false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			s, err := ParseSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := table.Price(s)
			if ok != tt.ok || p.Input != tt.input || p.Output != tt.out {
				t.Errorf("Price = %+v, %v; want %v/%v, %v", p, ok, tt.input, tt.out, tt.ok)
			}
			cost, priced := table.Cost(s, 1000, 1000)
			if priced != tt.ok || (!tt.ok && cost != 0) {
				t.Errorf("Cost = %v, %v", cost, priced)
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	t.Parallel()
	p := DefaultPrices()["gemini:gemini-2.5-pro"]
	if got, want := p.Cost(100_000, 1_000_000), 0.125+10.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("Cost(100k, 1M) = %v, want %v", got, want)
	}
	// Above 200k prompt tokens the whole call is billed at the long-context rate.
	if got, want := p.Cost(300_000, 1000), (300_000*2.5+1000*15.0)/1e6; math.Abs(got-want) > 1e-9 {
		t.Errorf("long-context Cost = %v, want %v", got, want)
	}
	if got := (Price{Input: 3, Output: 15}).Cost(0, 0); got != 0 {
		t.Errorf("Cost(0,0) = %v", got)
	}
}

func TestPriceOverrides(t *testing.T) {
	t.Parallel()
	base := DefaultPrices()
	over := base.With(map[string]Price{
		"Anthropic:claude-sonnet-4-5": {Input: 2, Output: 10},
		"openai:qwen2.5-coder":        {Input: 0.01, Output: 0.02},
	})
	if p, _ := over.Price(Spec{"anthropic", "claude-sonnet-4-5"}); p.Input != 2 {
		t.Errorf("override not applied: %+v", p)
	}
	if p, _ := base.Price(Spec{"anthropic", "claude-sonnet-4-5"}); p.Input != 3 {
		t.Errorf("With modified the original table: %+v", p)
	}
	if _, ok := over.Price(Spec{"openai", "qwen2.5-coder"}); !ok {
		t.Error("a local model priced in config is still unpriced")
	}
	if got := PriceTable(nil).With(map[string]Price{"openai:x": {Input: 1}}); len(got) != 1 {
		t.Errorf("With on nil = %v", got)
	}
	// DefaultPrices hands out copies.
	base["openai:gpt-4.1"] = Price{}
	if p, _ := DefaultPrices().Price(Spec{"openai", "gpt-4.1"}); p.Input != 2 {
		t.Error("DefaultPrices shares its map")
	}
}

func TestDefaultPricesAreSane(t *testing.T) {
	t.Parallel()
	for k, p := range DefaultPrices() {
		s, err := ParseSpec(k)
		if err != nil || s.String() != k {
			t.Errorf("key %q is not a canonical provider:model (%v)", k, err)
		}
		if p.Input <= 0 || p.Output < p.Input || p.ContextWindow <= 0 {
			t.Errorf("%s: implausible price %+v", k, p)
		}
		if p.LongAbove > 0 && (p.LongInput < p.Input || p.LongOutput < p.Output) {
			t.Errorf("%s: long-context rate below the base rate", k)
		}
	}
}
