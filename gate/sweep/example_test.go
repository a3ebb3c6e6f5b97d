package sweep_test

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/sweep"
)

// The stairs stop one step after the first step that does not hold.
func ExampleNext() {
	held := sweep.Step{Usable: true, Held: true}
	refused := sweep.Step{Usable: true, NotHeld: []sweep.Reason{sweep.ReasonThresholds}}
	fmt.Println(sweep.Next([]sweep.Step{held, held}))
	fmt.Println(sweep.Next([]sweep.Step{held, refused}))
	fmt.Println(sweep.Next([]sweep.Step{held, refused, refused}))
	// Output:
	// true
	// true
	// false
}
