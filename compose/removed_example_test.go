package compose_test

import (
	"fmt"

	"github.com/loadgate/loadgate/compose"
)

func ExampleRemoved() {
	r := compose.Removed{Containers: 2, Networks: 1, Images: 3}
	fmt.Println(r, "=", r.Total())
	fmt.Println(compose.Removed{Volumes: 1})
	fmt.Println(compose.Removed{})
	// Output:
	// 2 containers, 1 network, 3 images = 6
	// 1 volume
	// nothing
}
