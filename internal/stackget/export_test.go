package stackget

import (
	"net/http"
	"net/netip"
)

// Transport is the transport of a Get to ap, for the tests of its checks.
func Transport(ap netip.AddrPort) *http.Transport { return transport(ap) }
