package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"
)

// safeCaps may be added without stack.allow: Docker grants them by default anyway.
var safeCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"}

// hostReach lists what a service does that reaches the host, by scenario.HostKeys.
func hostReach(sc types.ServiceConfig, dir string) map[string]string {
	out := map[string]string{}
	if sc.Privileged {
		out["privileged"] = "true"
	}
	if sc.Pid == "host" {
		out["pid"] = sc.Pid
	}
	if sc.Ipc == "host" {
		out["ipc"] = sc.Ipc
	}
	if sc.UserNSMode == "host" {
		out["userns_mode"] = sc.UserNSMode
	}
	if strings.HasPrefix(sc.NetworkMode, "container:") {
		out["network_mode"] = sc.NetworkMode
	}
	for _, c := range sc.CapAdd {
		if !slices.Contains(safeCaps, strings.TrimPrefix(strings.ToUpper(c), "CAP_")) {
			out["cap_add"] = c
		}
	}
	if len(sc.Devices) > 0 {
		out["devices"] = sc.Devices[0].Source
	}
	for _, o := range sc.SecurityOpt {
		if strings.Contains(o, "unconfined") {
			out["security_opt"] = o
		}
	}
	for _, v := range sc.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if strings.HasSuffix(v.Source, "docker.sock") {
			out["docker_socket"] = v.Source
		} else if !inside(dir, v.Source) {
			out["bind"] = v.Source
		}
	}
	return out
}

func inside(dir, p string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if q, err := filepath.EvalSymlinks(p); err == nil {
		p = q
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// refuseHostReach refuses p's settings that reach the host and allow does not
// name, each with the file and line that sets it.
func refuseHostReach(p *types.Project, files []string, allow []string) []string {
	var bad []string
	for name, sc := range p.Services {
		for key, val := range hostReach(sc, p.WorkingDir) {
			if slices.Contains(allow, key) {
				continue
			}
			yamlKey := key
			switch key {
			case "bind", "docker_socket":
				yamlKey = "volumes"
			}
			bad = append(bad, fmt.Sprintf("%sservices.%s.%s (%s) reaches the host: name %q in the scenario's stack.allow to accept it", where(files, "services", name, yamlKey), name, yamlKey, val, key))
		}
	}
	for name, n := range p.Networks {
		if (n.Driver == "macvlan" || n.Driver == "ipvlan") && !slices.Contains(allow, "network_driver") {
			bad = append(bad, fmt.Sprintf("%snetworks.%s.driver (%s) puts the stack on the host's network: name %q in the scenario's stack.allow to accept it", where(files, "networks", name, "driver"), name, n.Driver, "network_driver"))
		}
	}
	return bad
}

func where(files []string, path ...string) string {
	found := ""
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc yaml.Node
		if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
			continue
		}
		var key *yaml.Node
		for n := doc.Content[0]; n != nil && len(path) > 0; path = path[1:] {
			key, n = child(n, path[0])
		}
		if key != nil && len(path) == 0 {
			found = fmt.Sprintf("%s:%d: ", filepath.Base(f), key.Line)
		}
	}
	return found
}

func child(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}
