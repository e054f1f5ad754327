package storeprint_test

import (
	"testing"

	"github.com/storeprint/storeprint"
)

// TestCatalogue: every state, reason and status a person can see has its
// words, in every language.
func TestCatalogue(t *testing.T) {
	t.Parallel()
	var words []storeprint.Word
	for _, s := range storeprint.PrinterStates {
		words = append(words, storeprint.PrinterWord(s))
	}
	for _, r := range storeprint.Reasons {
		words = append(words, storeprint.ReasonWord(r))
	}
	for _, s := range storeprint.Statuses {
		words = append(words, storeprint.StatusWord(s))
	}
	words = append(words, storeprint.WordPrinterCutsOff, storeprint.WordPrinterNoConfirm, storeprint.WordDisplayOnline, storeprint.WordDisplayOffline)
	for _, w := range words {
		for _, lang := range storeprint.Languages {
			if storeprint.Catalogue[w][lang] == "" {
				t.Errorf("%s has no %s words", w, lang)
			}
		}
	}
	if got := storeprint.Say(storeprint.WordPrinterPaperEnd, "fr"); got != "Out of paper" {
		t.Errorf("a language the catalogue lacks: got %q, want the English", got)
	}
}
