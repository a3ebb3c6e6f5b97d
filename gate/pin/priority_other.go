//go:build !linux

package pin

// Raised is a raise: none off Linux.
type Raised struct{}

// Raise, CheckRaise and ReadScheduling are unsupported off Linux.
func Raise() (*Raised, error) { return nil, ErrUnsupported }

func (r *Raised) Lower() {}

func (r *Raised) Dropped() string { return "" }

func CheckRaise() error { return ErrUnsupported }

func ReadScheduling() (string, error) { return "", ErrUnsupported }

func grantedBy() string { return "" }
