package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
)

// Target resolves "service:port" to an address for the load and names the path,
// once the port accepts a connection; a target not of this stack is ErrTargetRefused.
// It waits until the ready deadline; a target that exits or never accepts fails as
// a *ReadyError.
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
	return s.waitTarget(ctx, serviceColonPort, sc, port)
}

// attempt is one try at the target: done, fatal, or to be retried (why).
type attempt struct {
	addr, path string
	fatal      error
	container  string   // the container tried, for the error
	why        []string // what was tried and how it failed
}

func (s *Stack) tryTarget(ctx context.Context, target string, sc types.ServiceConfig, port int) attempt {
	cs, err := s.containers(ctx, true)
	if err != nil {
		return attempt{why: []string{err.Error()}}
	}
	run, stopped, states := serviceContainers(cs, sc.Name)
	if run == nil {
		return s.notRunning(ctx, target, sc.Name, stopped, states)
	}
	ins, err := s.api.ContainerInspect(ctx, run.ID)
	if err != nil {
		return attempt{container: run.name, why: []string{fmt.Sprintf("inspect %s: %v", run.name, err)}}
	}
	if ins.State != nil && (!ins.State.Running || ins.State.Restarting || ins.State.Paused) {
		return attempt{container: run.name, why: []string{fmt.Sprintf("%s is %s", run.name, ins.State.Status)}}
	}
	a := attempt{container: run.name}
	var refused []string // addresses off the stack's own bridge networks
	if ins.NetworkSettings != nil {
		if refused = s.dialNetworks(ctx, &a, ins.NetworkSettings, networksByPriority(sc), port); a.addr != "" {
			return a
		}
		if dialPublished(ctx, &a, ins.NetworkSettings.Ports[nat.Port(fmt.Sprintf("%d/tcp", port))]) {
			return a
		}
	}
	switch {
	case len(refused) > 0:
		a.fatal = fmt.Errorf("%w: %s: %s; the load goes only to the stack's own bridge network, never off this machine", ErrTargetRefused, target, strings.Join(refused, "; "))
	case len(a.why) == 0:
		a.fatal = fmt.Errorf("compose: target %s: container %s has no address on a project network", target, run.name)
	}
	return a
}

func serviceContainers(cs []ctr, service string) (run, stopped *ctr, states []string) {
	for i := range cs {
		c := &cs[i]
		if c.service != service {
			continue
		}
		states = append(states, c.name+" "+c.state)
		switch c.state {
		case "running":
			if run == nil {
				run = c
			}
		default:
			if stopped == nil {
				stopped = c
			}
		}
	}
	return run, stopped, states
}

// notRunning: a target must keep running, so one that exited, even with 0, fails.
func (s *Stack) notRunning(ctx context.Context, target, service string, stopped *ctr, states []string) attempt {
	if stopped != nil {
		ins, err := s.api.ContainerInspect(ctx, stopped.ID)
		if err != nil {
			return attempt{why: []string{fmt.Sprintf("inspect %s: %v", stopped.name, err)}}
		}
		verdict, state, health := judge(ins)
		exited := ins.State != nil && (ins.State.Status == "exited" || ins.State.Status == "dead")
		if exited || verdict == failed {
			re := &ReadyError{Project: s.name, Service: service, Container: stopped.name, State: state, Health: health,
				Err: fmt.Errorf("target %s: the container is not running", target)}
			explain(re, ins)
			s.attachLogs(re)
			return attempt{fatal: re, container: stopped.name}
		}
	}
	if len(states) == 0 {
		states = []string{"none"}
	}
	return attempt{why: []string{fmt.Sprintf("no running container of service %s (containers: %s)", service, strings.Join(states, ", "))}}
}

func networksByPriority(sc types.ServiceConfig) []string {
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
	return keys
}

// dialNetworks dials the container on each network in order; addresses off the
// stack's own bridge networks are refused, never dialled.
func (s *Stack) dialNetworks(ctx context.Context, a *attempt, ns *container.NetworkSettings, keys []string, port int) (refused []string) {
	for _, k := range keys {
		netName := s.project.Networks[k].Name
		ep, ok := ns.Networks[netName]
		if !ok || ep == nil || ep.IPAddress == "" {
			continue
		}
		if why, err := s.offBridge(ctx, netName, ep.IPAddress); err != nil {
			a.why = append(a.why, err.Error())
			continue
		} else if why != "" {
			refused = append(refused, why)
			continue
		}
		addr := net.JoinHostPort(ep.IPAddress, strconv.Itoa(port))
		if err := dial(ctx, addr); err == nil {
			a.addr, a.path = addr, PathContainerNetwork
			return refused
		} else {
			a.why = append(a.why, fmt.Sprintf("%s on %s: %v", addr, netName, err))
		}
	}
	return refused
}

func dialPublished(ctx context.Context, a *attempt, bs []nat.PortBinding) bool {
	for _, b := range bs {
		host := b.HostIP
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		addr := net.JoinHostPort(host, b.HostPort)
		if err := dial(ctx, addr); err == nil {
			a.addr, a.path = addr, PathPublishedPort
			return true
		} else {
			a.why = append(a.why, fmt.Sprintf("published %s: %v", addr, err))
		}
	}
	return false
}

// offBridge says why ip is not on this stack's own bridge network ("" when it is):
// a macvlan or ipvlan network puts containers on the LAN.
func (s *Stack) offBridge(ctx context.Context, netName, ip string) (string, error) {
	nw, err := s.api.NetworkInspect(ctx, netName, network.InspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspect network %s: %v", netName, err)
	}
	switch {
	case nw.Driver != "bridge":
		return fmt.Sprintf("%s is on network %s, whose driver is %s, not bridge", ip, netName, nw.Driver), nil
	case nw.Labels[api.ProjectLabel] != s.name:
		return fmt.Sprintf("%s is on network %s, which is not this stack's (external)", ip, netName), nil
	}
	addr := net.ParseIP(ip)
	for _, c := range nw.IPAM.Config {
		if _, sub, err := net.ParseCIDR(c.Subnet); err == nil && addr != nil && sub.Contains(addr) {
			return "", nil
		}
	}
	return fmt.Sprintf("%s is outside the subnets of network %s", ip, netName), nil
}

func dial(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

var errNotAccepting = errors.New("the target port accepted no connection")
