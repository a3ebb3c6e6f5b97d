package compose

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"

	"github.com/loadgate/loadgate/gate/scenario"
)

// A malicious head's compose file (testdata/hostreach): the Docker socket
// to throttle base, a host bind to rewrite the results, another side's
// network namespace, macvlan to reach the LAN. Each is refused with its
// file and line unless stack.allow names it; before, all of them passed.
func TestRegression_HeadComposeReachesTheHost(t *testing.T) {
	file, _ := filepath.Abs("testdata/hostreach/compose.yaml")
	opts, err := cli.NewProjectOptions([]string{file}, cli.WithOsEnv, cli.WithName("hostreach"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Join(refuseHostReach(p, []string{file}, nil), "\n")
	for _, want := range []string{
		"compose.yaml:6: services.throttler.volumes (/var/run/docker.sock)",
		"compose.yaml:11: services.rewriter.volumes (/)",
		"compose.yaml:10: services.rewriter.privileged",
		"compose.yaml:15: services.sniffer.network_mode (container:loadgate-base-api-1)",
		"compose.yaml:16: services.sniffer.cap_add (NET_ADMIN)",
		"compose.yaml:17: services.sniffer.pid (host)",
		"compose.yaml:20: networks.lan.driver (macvlan)",
	} {
		if !strings.Contains(bad, want) {
			t.Errorf("refusals lack %q:\n%s", want, bad)
		}
	}
	if got := refuseHostReach(p, []string{file}, slices.Clone(scenario.HostKeys)); len(got) != 0 {
		t.Errorf("every key allowed, still refused: %q", got)
	}
	// NET_BIND_SERVICE alone is a default capability: not refused.
	if strings.Contains(bad, "NET_BIND_SERVICE") {
		t.Errorf("a default capability refused:\n%s", bad)
	}
}
