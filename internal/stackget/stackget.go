// Package stackget is the one way loadgate reads a page from a service of
// its own stack (counts, a stub's configuration). Each Get is one bounded
// GET to an IP:port literal only (checked before and after connect), with
// no proxy, no redirect, and bounded time and size. Safe for concurrent use.
package stackget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is in the chain of every error about an address, redirect or
// network Get will not use.
var ErrRefused = errors.New("refused: loadgate reads only the stack's own address")

// ErrTooLarge is in the chain of the error of a body larger than
// Request.MaxBytes.
var ErrTooLarge = errors.New("answer too large")

// StatusError is the error of an answer other than 200 OK.
type StatusError struct {
	Path string
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s answered %d", e.Path, e.Code) }

// Request bounds one Get.
type Request struct {
	Accept   string        // the Accept header ("": none)
	MaxBytes int64         // of the body; > 0
	Timeout  time.Duration // of the whole GET, connect to last byte; > 0
}

// Page is a 200 answer.
type Page struct {
	ContentType string
	Body        []byte
}

// Get gets http://addr+path as described in the package comment.
func Get(ctx context.Context, addr, path string, r Request) (Page, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return Page{}, fmt.Errorf("%w: %q is not the IP:port of a service of the stack", ErrRefused, addr)
	}
	ap = netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())
	if r.MaxBytes <= 0 || r.Timeout <= 0 {
		return Page{}, fmt.Errorf("stackget: GET %s: no bound (MaxBytes %d, Timeout %v)", path, r.MaxBytes, r.Timeout)
	}
	if !strings.HasPrefix(path, "/") {
		return Page{}, fmt.Errorf("stackget: GET %q: the path must start with /", path)
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	tr := transport(ap)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: refuseRedirect}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ap.String()+path, nil)
	if err != nil {
		return Page{}, fmt.Errorf("stackget: GET %s: %w", path, err)
	}
	if r.Accept != "" {
		req.Header.Set("Accept", r.Accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, fmt.Errorf("GET %s: %w", path, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Page{}, &StatusError{Path: path, Code: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.MaxBytes+1))
	if err != nil {
		return Page{}, fmt.Errorf("GET %s: %w", path, err)
	}
	if int64(len(body)) > r.MaxBytes {
		return Page{}, fmt.Errorf("GET %s: %w: more than %d bytes", path, ErrTooLarge, r.MaxBytes)
	}
	return Page{ContentType: resp.Header.Get("Content-Type"), Body: body}, nil
}

// unwrapURL drops *url.Error's "Get \"http://...\":" prefix (the caller
// names the path) but keeps the chain.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("%w: the answer redirects to %s, which is not followed", ErrRefused, req.URL.Redacted())
}

// transport connects only to ap, through no proxy, one connection a Get.
func transport(ap netip.AddrPort) *http.Transport {
	check := func(address string) error {
		got, err := netip.ParseAddrPort(address)
		if err != nil || netip.AddrPortFrom(got.Addr().WithZone("").Unmap(), got.Port()) != ap {
			return fmt.Errorf("%w: refusing to connect to %s, not %s", ErrRefused, address, ap)
		}
		return nil
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error { return check(address) }}
	return &http.Transport{
		Proxy: nil, // never HTTP(S)_PROXY: the stack's address is reached directly or not at all
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			switch network {
			case "tcp", "tcp4", "tcp6":
			default:
				return nil, fmt.Errorf("%w: network %q", ErrRefused, network)
			}
			if err := check(address); err != nil {
				return nil, err
			}
			c, err := d.DialContext(ctx, "tcp", ap.String())
			if err != nil {
				return nil, err
			}
			if err := check(c.RemoteAddr().String()); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      false,
	}
}
