package compose

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// targetEngine is one running container of service api on network "net",
// whose endpoint address the test chooses, and that network's inspect.
type targetEngine struct {
	client.APIClient
	ip  string
	net network.Inspect
}

func (e *targetEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	return []container.Summary{{ID: "api1-container", Names: []string{"/api1"}, State: "running",
		Labels: map[string]string{api.ServiceLabel: "api", api.ContainerNumberLabel: "1"}}}, nil
}

func (e *targetEngine) ContainerInspect(context.Context, string) (container.InspectResponse, error) {
	return container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{ID: "api1-container", State: &container.State{Status: "running", Running: true}},
		NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{
			"loadgate-t_net": {IPAddress: e.ip},
		}},
	}, nil
}

func (e *targetEngine) NetworkInspect(context.Context, string, network.InspectOptions) (network.Inspect, error) {
	return e.net, nil
}

// Issue 33: the load went to whatever address Docker reported for the
// target, so a head whose compose file put the target on a macvlan network
// (base allowing macvlan by name) sent the load to a LAN address. Only an
// address inside a subnet of the stack's own bridge network is a target.
// The fake's address is a listener on this machine, so every case would
// connect: what refuses is the network's check.
func TestRegression_TargetOnlyOnTheStacksOwnBridge(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	own := map[string]string{api.ProjectLabel: "loadgate-t"}
	ipam := network.IPAM{Config: []network.IPAMConfig{{Subnet: "127.0.0.0/8"}}}
	for _, c := range []struct {
		name string
		net  network.Inspect
		want string // "" for the address
	}{
		{"own bridge", network.Inspect{Driver: "bridge", Labels: own, IPAM: ipam}, ""},
		{"macvlan", network.Inspect{Driver: "macvlan", Labels: own, IPAM: ipam}, "driver is macvlan"},
		{"ipvlan", network.Inspect{Driver: "ipvlan", Labels: own, IPAM: ipam}, "driver is ipvlan"},
		{"external bridge", network.Inspect{Driver: "bridge", IPAM: ipam}, "not this stack's"},
		{"outside the subnet", network.Inspect{Driver: "bridge", Labels: own, IPAM: network.IPAM{Config: []network.IPAMConfig{{Subnet: "172.30.0.0/16"}}}}, "outside the subnets"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &targetEngine{ip: "127.0.0.1", net: c.net}
			s := &Stack{name: "loadgate-t", api: e, log: io.Discard, project: &types.Project{
				Services: types.Services{"api": {Name: "api", Networks: map[string]*types.ServiceNetworkConfig{"net": nil}}},
				Networks: types.Networks{"net": {Name: "loadgate-t_net"}},
			}}
			a := s.tryTarget(context.Background(), "api:"+strconv.Itoa(port), s.project.Services["api"], port)
			if c.want == "" {
				if a.fatal != nil || a.addr != ln.Addr().String() || a.path != PathContainerNetwork {
					t.Fatalf("attempt %+v, want %s on the container network", a, ln.Addr())
				}
				return
			}
			if !errors.Is(a.fatal, ErrTargetRefused) || !strings.Contains(a.fatal.Error(), c.want) || a.addr != "" {
				t.Fatalf("attempt %+v, want refused: %s", a, c.want)
			}
		})
	}
}
