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

// foreignAge is how old a resource started from another host must be
// before Sweep removes it (its owner's liveness cannot be checked).
const foreignAge = time.Hour

// Sweep removes the leftovers of earlier runs: every container, network,
// volume and built image carrying loadgate's run label, except those of a
// stack still owned by a live process — a stack of this process that is
// not down yet, or one whose owner label names this host and a live pid.
// Resources from another host (a shared engine) are removed when older
// than an hour. It returns what it removed, by kind.
//
// Sweep is bounded: without a deadline on ctx it gives up after
// SweepTimeout.
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

// RemoveOwned removes, at once and without asking whether they are live,
// every container, network, volume and image this process created (its
// io.loadgate.owner label): the emergency exit of a second signal. Bound
// ctx: it is meant to be quick (containers are killed, not stopped).
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
		// Ours and not registered live: a leftover — unless it names no
		// project: an intermediate build image (owner label only) that a
		// live stack's images may be built on; Down prunes it with them.
		return labels[LabelProject] == ""
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeImages removes images children first: an image another one was
// built on ("image has dependent child images") can only go after it. It
// orders them newest first and children before their parents, then retries
// the failures for as long as a pass removes something (a child outside the
// list, e.g. a user's image built on a loadgate image, keeps its parent).
// The errors that remain name each image left and why.
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

// removeLabelled removes containers (with their anonymous volumes), then
// networks, volumes and images matching the label filter for which remove
// says true, and counts what it removed by kind.
func removeLabelled(ctx context.Context, c client.APIClient, label string, remove func(map[string]string, time.Time) bool) (Removed, error) {
	f := filters.NewArgs(filters.Arg("label", label))
	var n Removed
	var errs []error
	gone := func(err error) bool { return err == nil || errdefs.IsNotFound(err) }

	cs, err := c.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return n, fmt.Errorf("compose: list containers: %w", err)
	}
	for _, ct := range cs {
		if !remove(ct.Labels, time.Unix(ct.Created, 0)) {
			continue
		}
		if err := c.ContainerRemove(ctx, ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); !gone(err) {
			errs = append(errs, fmt.Errorf("container %s left: %w", strings.TrimPrefix(strings.Join(ct.Names, ","), "/"), err))
			continue
		}
		n.Containers++
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
			errs = append(errs, fmt.Errorf("network %s left: %w", nw.Name, err))
			continue
		}
		n.Networks++
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
			errs = append(errs, fmt.Errorf("volume %s left: %w", v.Name, err))
			continue
		}
		n.Volumes++
	}
	// The classic builder adds each build label in its own LABEL step, in
	// name order: owner, project, run, side. A build killed between those
	// steps leaves images with the owner label only, so the sweep of every
	// run (label io.loadgate.run) looks for images by the owner label.
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
