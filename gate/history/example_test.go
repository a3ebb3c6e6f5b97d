package history_test

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
)

// Each entry is its own file on the data branch, so two pushes never
// touch the same file.
func ExampleEntryPath() {
	e := history.Entry{Commit: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
		Date:   time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Result: &result.Result{Scenario: result.Scenario{Name: "checkout"}}}
	p, err := history.EntryPath(e)
	fmt.Println(p, err)
	// Output: checkout/1772366400-9f86d081884c.json <nil>
}
