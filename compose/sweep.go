package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
)

// foreignAge is how old a resource started from another host must be
// before Sweep removes it (its owner's liveness cannot be checked).
const foreignAge = time.Hour

// Sweep removes the leftovers of earlier runs: every container, network,
// volume and built image carrying loadgate's run label, except those of a
// stack still owned by a live process — a stack of this process that is
// not down yet, or one whose owner label names this host and a live pid.
// Resources from another host (a shared engine) are removed when older
// than an hour. It returns how many resources it removed.
func Sweep(ctx context.Context) (removed int, err error) {
	cli, err := newCLI(io.Discard)
	if err != nil {
		return 0, err
	}
	defer cli.Client().Close()
	host, _ := os.Hostname()
	return removeLabelled(ctx, cli.Client(), LabelRun, func(labels map[string]string, created time.Time) bool {
		return !ownerAlive(labels, created, host)
	})
}

func ownerAlive(labels map[string]string, created time.Time, host string) bool {
	if isLive(labels[LabelProject]) {
		return true
	}
	h, pidStr, ok := strings.Cut(labels[LabelOwner], ":")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	if h != host {
		return !created.IsZero() && time.Since(created) < foreignAge
	}
	if pid == os.Getpid() {
		return false // ours, and not registered live: a leftover
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeLabelled removes containers (with their anonymous volumes), then
// networks, volumes and images matching the label filter for which remove
// says true.
func removeLabelled(ctx context.Context, c client.APIClient, label string, remove func(map[string]string, time.Time) bool) (int, error) {
	f := filters.NewArgs(filters.Arg("label", label))
	n := 0
	var errs []error
	gone := func(err error) bool { return err == nil || errdefs.IsNotFound(err) }

	cs, err := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("compose: list containers: %w", err)
	}
	for _, ct := range cs {
		if !remove(ct.Labels, time.Unix(ct.Created, 0)) {
			continue
		}
		if err := c.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); !gone(err) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	ns, err := c.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list networks: %w", err)
	}
	for _, nw := range ns {
		if !remove(nw.Labels, nw.Created) {
			continue
		}
		if err := c.NetworkRemove(ctx, nw.ID); !gone(err) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	vs, err := c.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list volumes: %w", err)
	}
	for _, v := range vs.Volumes {
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		if !remove(v.Labels, created) {
			continue
		}
		if err := c.VolumeRemove(ctx, v.Name, true); !gone(err) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	is, err := c.ImageList(ctx, image.ListOptions{All: true, Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list images: %w", err)
	}
	for _, im := range is {
		if !remove(im.Labels, time.Unix(im.Created, 0)) {
			continue
		}
		if _, err := c.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true}); !gone(err) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("compose: remove labelled resources: %w", errors.Join(errs...))
	}
	return n, nil
}

// Labelled lists the containers, networks, volumes and images carrying the
// label selector ("key" or "key=value"), as "kind name" lines.
func Labelled(ctx context.Context, label string) ([]string, error) {
	cli, err := newCLI(io.Discard)
	if err != nil {
		return nil, err
	}
	c := cli.Client()
	defer c.Close()
	f := filters.NewArgs(filters.Arg("label", label))
	var left []string
	cs, err := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("compose: list containers: %w", err)
	}
	for _, ct := range cs {
		left = append(left, "container "+strings.Join(ct.Names, ","))
	}
	ns, err := c.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("compose: list networks: %w", err)
	}
	for _, nw := range ns {
		left = append(left, "network "+nw.Name)
	}
	vs, err := c.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("compose: list volumes: %w", err)
	}
	for _, v := range vs.Volumes {
		left = append(left, "volume "+v.Name)
	}
	is, err := c.ImageList(ctx, image.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("compose: list images: %w", err)
	}
	for _, im := range is {
		left = append(left, "image "+im.ID)
	}
	return left, nil
}
