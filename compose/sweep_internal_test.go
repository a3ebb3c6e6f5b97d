package compose

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
)

// fakeImages is an engine holding images with parents: removing an image
// another one was built on fails as the engine does ("image has dependent
// child images").
type fakeImages struct {
	client.APIClient
	parent  map[string]string // id → parent id
	removed []string
}

func (f *fakeImages) ImageRemove(_ context.Context, id string, _ image.RemoveOptions) ([]image.DeleteResponse, error) {
	if _, ok := f.parent[id]; !ok {
		return nil, errdefs.NotFound(errors.New("no such image"))
	}
	for _, p := range f.parent {
		if p == id {
			return nil, errdefs.Conflict(errors.New("conflict: unable to delete " + id + " (cannot be forced) - image has dependent child images"))
		}
	}
	delete(f.parent, id)
	f.removed = append(f.removed, id)
	return nil, nil
}

// The classic builder puts each build label on its own LABEL step, so the
// labelled images of one build form a chain (run label → side label), built
// within the same second: the sweep must remove children first.
func TestRemoveImagesChildrenFirst(t *testing.T) {
	f := &fakeImages{parent: map[string]string{"sha256:a": "sha256:base", "sha256:b": "sha256:a", "sha256:c": "sha256:b", "sha256:base": ""}}
	// Listed parents first, all created in the same second (the worst order).
	imgs := []image.Summary{{ID: "sha256:base", Created: 7}, {ID: "sha256:a", Created: 7, ParentID: "sha256:base"}, {ID: "sha256:b", Created: 7, ParentID: "sha256:a"}, {ID: "sha256:c", Created: 7, ParentID: "sha256:b"}}
	n, errs := removeImages(context.Background(), f, imgs)
	if n != 4 || len(errs) != 0 {
		t.Fatalf("removed %d, errors %v; want 4 and none", n, errs)
	}
	if got := strings.Join(f.removed, " "); got != "sha256:c sha256:b sha256:a sha256:base" {
		t.Logf("removal order %s", got)
	}

	// A child outside the list (a user's image built on a loadgate image)
	// keeps its parent: reported, naming the image left and why.
	f = &fakeImages{parent: map[string]string{"sha256:p": "", "sha256:userchild": "sha256:p", "sha256:q": ""}}
	n, errs = removeImages(context.Background(), f, []image.Summary{{ID: "sha256:p", RepoTags: []string{"loadgate-x-api:latest"}}, {ID: "sha256:q"}})
	if n != 1 || len(errs) != 1 {
		t.Fatalf("removed %d, errors %v; want 1 and one error", n, errs)
	}
	if msg := errs[0].Error(); !strings.Contains(msg, "image p (loadgate-x-api:latest) left") || !strings.Contains(msg, "dependent child images") {
		t.Errorf("error %q does not say what is left and why", msg)
	}
}
