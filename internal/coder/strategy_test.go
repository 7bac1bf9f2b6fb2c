package coder_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/coder"
	"github.com/azero-dev/azero/internal/edit"
)

func TestSelectStrategy(t *testing.T) {
	t.Parallel()
	small := []byte(strings.Repeat("x\n", 500))
	large := []byte(strings.Repeat("x\n", 501))
	wide := []byte(strings.Repeat("x", 15001))
	tests := []struct {
		name     string
		change   edit.ChangeType
		existing []byte
		want     coder.Strategy
	}{
		{"add nothing", edit.Add, nil, coder.FullFile},
		{"add over existing large content", edit.Add, large, coder.FullFile},
		{"modify small", edit.Modify, small, coder.FullFile},
		{"modify many lines", edit.Modify, large, coder.Blocks},
		{"modify long lines", edit.Modify, wide, coder.Blocks},
		{"delete", edit.Delete, large, coder.FullFile},
	}
	for _, tt := range tests {
		if got := coder.SelectStrategy(tt.change, tt.existing); got != tt.want {
			t.Errorf("%s: SelectStrategy = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStrategyMarshalsAsWord(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(struct {
		S coder.Strategy
	}{coder.Blocks})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"S":"blocks"}`; string(got) != want {
		t.Errorf("json = %s, want %s", got, want)
	}
}
