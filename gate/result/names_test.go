package result_test

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/result"
)

func ExampleShortHash() {
	fmt.Println(result.ShortHash("sha256:9f86d081884c7d659a2f"))
	fmt.Println(result.ShortHash("0a1b2c3d4e5f60718293a4b5"))
	fmt.Println(result.ShortHash("abc"), result.ShortHash("") == "")
	// Output:
	// sha256:9f86d081884c
	// 0a1b2c3d4e5f
	// abc true
}
