package result

import "fmt"

// Session numbers of a WebSocket workload (Workload.Cancelled,
// MessagesReceived, FirstMessageMS, ConnectMS and their histograms): merged
// exactly like latency, validated like it.

// IsSession reports whether w carries WebSocket session numbers.
func (w *Workload) IsSession() bool {
	return w.FirstMessageMS != nil || w.ConnectMS != nil
}

func (w *Workload) mergeSession(b *Workload, at string) error {
	if !w.IsSession() && !b.IsSession() {
		return nil
	}
	w.Cancelled += b.Cancelled
	w.MessagesReceived += b.MessagesReceived
	var err error
	w.FirstMessageH, w.FirstMessageMS, err = mergeOptional(at+"first_message_histogram", w.FirstMessageH, w.FirstMessageMS, b.FirstMessageH, b.FirstMessageMS)
	if err != nil {
		return err
	}
	w.ConnectH, w.ConnectMS, err = mergeOptional(at+"connect_histogram", w.ConnectH, w.ConnectMS, b.ConnectH, b.ConnectMS)
	return err
}

func mergeOptional(path, a string, sa *Summary, b string, sb *Summary) (string, *Summary, error) {
	ca, cb := int64(0), int64(0)
	if sa != nil {
		ca = sa.Count
	}
	if sb != nil {
		cb = sb.Count
	}
	h, s, err := mergeHist(path, a, ca, b, cb)
	if err != nil {
		return "", nil, err
	}
	if h == "" {
		h = a
		if h == "" {
			h = b
		}
	}
	return h, &s, nil
}

func (w *Workload) validateSession(at string, check func(path, hist, sumPath string, count int64) error) error {
	for _, x := range []struct {
		name, hist, sum string
		s               *Summary
	}{
		{"first_message_histogram", w.FirstMessageH, "first_message_ms", w.FirstMessageMS},
		{"connect_histogram", w.ConnectH, "connect_ms", w.ConnectMS},
	} {
		switch {
		case x.s == nil && x.hist != "":
			return fmt.Errorf("%s%s without %s%s", at, x.name, at, x.sum)
		case x.s != nil:
			if err := check(at+x.name, x.hist, at+x.sum, x.s.Count); err != nil {
				return err
			}
		}
	}
	if w.Cancelled < 0 || w.Cancelled > w.Succeeded {
		return fmt.Errorf("%scancelled is %d, outside 0..succeeded (%d)", at, w.Cancelled, w.Succeeded)
	}
	if w.MessagesReceived < 0 {
		return fmt.Errorf("%smessages_received is %d, below 0", at, w.MessagesReceived)
	}
	return nil
}
