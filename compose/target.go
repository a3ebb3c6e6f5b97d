package compose

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-connections/nat"
)

// Target resolves "service:port" to an address the load can be sent to and
// says which path it takes. On Linux that is the container's IP on the
// project network ("container-network": no docker-proxy in the way); when
// that IP does not answer from here (e.g. Docker Desktop) and the port is
// published, the published host port is used ("published-port"). A target
// that is not a service of this stack is refused (ErrTargetRefused).
func (s *Stack) Target(ctx context.Context, serviceColonPort string) (addr string, path string, err error) {
	svc, portStr, ok := strings.Cut(serviceColonPort, ":")
	if !ok || svc == "" {
		return "", "", fmt.Errorf("%w: %q is not service:port", ErrTargetRefused, serviceColonPort)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", "", fmt.Errorf("%w: %q: port %q is not a TCP port", ErrTargetRefused, serviceColonPort, portStr)
	}
	sc, ok := s.project.Services[svc]
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not a service of stack %s (services: %s)", ErrTargetRefused, svc, s.name, strings.Join(s.Services(), ", "))
	}
	cs, err := s.containers(ctx, false)
	if err != nil {
		return "", "", err
	}
	var id, name string
	for _, c := range cs {
		if c.service == svc && c.state == "running" {
			id, name = c.ID, c.name
			break
		}
	}
	if id == "" {
		return "", "", fmt.Errorf("compose: target %s: no running container of service %s", serviceColonPort, svc)
	}
	ins, err := s.api.ContainerInspect(ctx, id)
	if err != nil {
		return "", "", fmt.Errorf("compose: target %s: inspect %s: %w", serviceColonPort, name, err)
	}
	// The service's project networks, by priority then name.
	keys := make([]string, 0, len(sc.Networks))
	for k := range sc.Networks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		pi, pj := 0, 0
		if n := sc.Networks[keys[i]]; n != nil {
			pi = n.Priority
		}
		if n := sc.Networks[keys[j]]; n != nil {
			pj = n.Priority
		}
		if pi != pj {
			return pi > pj
		}
		return keys[i] < keys[j]
	})
	var tried []string
	if ins.NetworkSettings != nil {
		for _, k := range keys {
			netName := s.project.Networks[k].Name
			ep, ok := ins.NetworkSettings.Networks[netName]
			if !ok || ep == nil || ep.IPAddress == "" {
				continue
			}
			a := net.JoinHostPort(ep.IPAddress, strconv.Itoa(port))
			if err := dial(ctx, a); err == nil {
				return a, PathContainerNetwork, nil
			} else {
				tried = append(tried, fmt.Sprintf("%s on %s: %v", a, netName, err))
			}
		}
		if bs := ins.NetworkSettings.Ports[nat.Port(fmt.Sprintf("%d/tcp", port))]; len(bs) > 0 {
			for _, b := range bs {
				host := b.HostIP
				if host == "" || host == "0.0.0.0" || host == "::" {
					host = "127.0.0.1"
				}
				a := net.JoinHostPort(host, b.HostPort)
				if err := dial(ctx, a); err == nil {
					return a, PathPublishedPort, nil
				} else {
					tried = append(tried, fmt.Sprintf("published %s: %v", a, err))
				}
			}
		}
	}
	if len(tried) == 0 {
		return "", "", fmt.Errorf("compose: target %s: container %s has no address on a project network", serviceColonPort, name)
	}
	return "", "", fmt.Errorf("compose: target %s not reachable from this host: %s", serviceColonPort, strings.Join(tried, "; "))
}

func dial(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}
