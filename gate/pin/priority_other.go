//go:build !linux

package pin

// Raise is not supported off Linux.
func Raise() (lower func(), err error) { return nil, ErrUnsupported }

// CheckRaise is not supported off Linux.
func CheckRaise() error { return ErrUnsupported }

// ReadScheduling is not supported off Linux.
func ReadScheduling() (string, error) { return "", ErrUnsupported }
