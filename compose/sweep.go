package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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

// foreignAge: another host's stacks cannot be checked for liveness.
const foreignAge = time.Hour

// Sweep removes the leftovers of earlier runs but the stacks of live processes
// of this host; another host's are removed after foreignAge. Without a
// deadline on ctx it gives up after SweepTimeout.
func Sweep(ctx context.Context) (removed Removed, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, SweepTimeout)
		defer cancel()
	}
	cli, err := newCLI(io.Discard)
	if err != nil {
		return Removed{}, err
	}
	defer cli.Client().Close()
	host, _ := os.Hostname()
	return removeLabelled(ctx, cli.Client(), LabelRun, func(labels map[string]string, created time.Time) bool {
		return !ownerAlive(labels, created, host)
	})
}

// SweepTimeout bounds a Sweep whose context has no deadline.
const SweepTimeout = 2 * time.Minute

// RemoveOwned removes everything this process created: a second signal's exit.
// Bound ctx: it does not.
func RemoveOwned(ctx context.Context) (removed Removed, err error) {
	cli, err := newCLI(io.Discard)
	if err != nil {
		return Removed{}, err
	}
	defer cli.Client().Close()
	return removeLabelled(ctx, cli.Client(), LabelOwner+"="+owner(), func(map[string]string, time.Time) bool { return true })
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
		// A leftover unless projectless: an intermediate build image, which Down prunes.
		return labels[LabelProject] == ""
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeImages removes images children first, retrying while a pass removes
// something; the errors left name each image kept and why.
func removeImages(ctx context.Context, c client.APIClient, imgs []image.Summary) (int, []error) {
	parent := map[string]bool{}
	for _, im := range imgs {
		if im.ParentID != "" {
			parent[im.ParentID] = true
		}
	}
	sort.SliceStable(imgs, func(i, j int) bool {
		if pi, pj := parent[imgs[i].ID], parent[imgs[j].ID]; pi != pj {
			return !pi
		}
		return imgs[i].Created > imgs[j].Created
	})
	n := 0
	left := imgs
	var failed map[string]error
	for pass := 0; len(left) > 0 && pass < 10; pass++ {
		failed = map[string]error{}
		var next []image.Summary
		for _, im := range left {
			_, err := c.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
			if err == nil || errdefs.IsNotFound(err) {
				n++
				continue
			}
			failed[im.ID] = err
			next = append(next, im)
		}
		if len(next) == len(left) || ctx.Err() != nil {
			left = next
			break
		}
		left = next
	}
	var errs []error
	for _, im := range left {
		errs = append(errs, fmt.Errorf("image %s%s left: %w", shortID(im.ID), tags(im.RepoTags), failed[im.ID]))
	}
	return n, errs
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

func tags(t []string) string {
	var keep []string
	for _, s := range t {
		if s != "<none>:<none>" {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return " (" + strings.Join(keep, ", ") + ")"
}

func removeLabelled(ctx context.Context, c client.APIClient, label string, remove func(map[string]string, time.Time) bool) (Removed, error) {
	f := filters.NewArgs(filters.Arg("label", label))
	var n Removed
	var errs []error
	cs, err := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list containers: %w", err)
	}
	for _, ct := range cs {
		removeOne(labelled{"container " + strings.TrimPrefix(strings.Join(ct.Names, ","), "/"), ct.Labels, time.Unix(ct.Created, 0), func() error {
			return c.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}}, remove, &n.Containers, &errs)
	}
	ns, err := c.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list networks: %w", err)
	}
	for _, nw := range ns {
		removeOne(labelled{"network " + nw.Name, nw.Labels, nw.Created, func() error { return c.NetworkRemove(ctx, nw.ID) }}, remove, &n.Networks, &errs)
	}
	vs, err := c.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list volumes: %w", err)
	}
	for _, v := range vs.Volumes {
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		removeOne(labelled{"volume " + v.Name, v.Labels, created, func() error { return c.VolumeRemove(ctx, v.Name, true) }}, remove, &n.Volumes, &errs)
	}
	// A build killed between its LABEL steps leaves images with the owner label only.
	fi := f
	if label == LabelRun {
		fi = filters.NewArgs(filters.Arg("label", LabelOwner))
	}
	is, err := c.ImageList(ctx, image.ListOptions{All: true, Filters: fi})
	if err != nil {
		return n, fmt.Errorf("compose: list images: %w", err)
	}
	var imgs []image.Summary
	for _, im := range is {
		if remove(im.Labels, time.Unix(im.Created, 0)) {
			imgs = append(imgs, im)
		}
	}
	m, ierrs := removeImages(ctx, c, imgs)
	n.Images = m
	errs = append(errs, ierrs...)
	if len(errs) > 0 {
		return n, fmt.Errorf("compose: remove labelled resources: %w", errors.Join(errs...))
	}
	return n, nil
}

type labelled struct {
	what    string // "container NAME"
	labels  map[string]string
	created time.Time
	rm      func() error
}

func removeOne(l labelled, remove func(map[string]string, time.Time) bool, n *int, errs *[]error) {
	if !remove(l.labels, l.created) {
		return
	}
	if err := l.rm(); err != nil && !errdefs.IsNotFound(err) {
		*errs = append(*errs, fmt.Errorf("%s left: %w", l.what, err))
		return
	}
	*n++
}

// Labelled lists what carries label ("key" or "key=value") as "kind name".
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
