//go:build !linux

package pin

// Raised is a raise: none off Linux.
type Raised struct{}

// Raise is not supported off Linux.
func Raise() (*Raised, error) { return nil, ErrUnsupported }

// Lower does nothing off Linux.
func (r *Raised) Lower() {}

// Dropped is "" off Linux.
func (r *Raised) Dropped() string { return "" }

// CheckRaise is not supported off Linux.
func CheckRaise() error { return ErrUnsupported }

// ReadScheduling is not supported off Linux.
func ReadScheduling() (string, error) { return "", ErrUnsupported }
