package stack_test

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/stack"
)

func ExampleRemoved() {
	r := stack.Removed{Containers: 2, Networks: 1, Images: 3}
	fmt.Println(r, "=", r.Total())
	fmt.Println(stack.Removed{Volumes: 1})
	fmt.Println(stack.Removed{})
	// Output:
	// 2 containers, 1 network, 3 images = 6
	// 1 volume
	// nothing
}
