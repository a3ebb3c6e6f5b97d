// Command wakeups attributes the voluntary context switches of -comm's threads, per
// request, from `perf script` sched events with call chains (run.sh): each sleep by
// where it blocked, and its wake-up by the waker's stack.
//
//	perf script -F comm,tid,cpu,event,trace,ip,sym -i perf.data | go run ./bench/wakeups
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	comm := flag.String("comm", "loadgate", "the generator's comm (process name, at most 15 characters)")
	secs := flag.Float64("secs", 5, "seconds recorded")
	rate := flag.Float64("rate", 5000, "the generator's request rate, per second")
	peer := flag.String("peer", "server", "the other side's comm (the target when -comm is the generator, and vice versa), to name it as a waker")
	resultFile := flag.String("result", "", "instead: print the lateness of this loadgate result.json and exit")
	flag.Parse()
	if *resultFile != "" {
		if err := printLateness(os.Stdout, *resultFile); err != nil {
			fmt.Fprintln(os.Stderr, "wakeups:", err)
			os.Exit(1)
		}
		return
	}
	a := newAttribution(*comm, *peer)
	if err := a.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "wakeups:", err)
		os.Exit(1)
	}
	a.print(os.Stdout, *secs**rate)
}

type pair struct{ sleep, cause, waker string }

// unrecorded is the cause of a sleep whose wake-up the recording lacks.
const unrecorded = "not recorded: woken from the idle CPU by a timer (timerfd, nanosleep or epoll_wait's timeout)"

type attribution struct {
	comm, peer string
	sleeping   map[string]string // tid → where it sleeps
	sleeps     map[string]int
	pairs      map[pair]int
	invol      int
}

func newAttribution(comm, peer string) *attribution {
	if len(comm) > 15 {
		comm = comm[:15] // the kernel's TASK_COMM_LEN
	}
	if len(peer) > 15 {
		peer = peer[:15]
	}
	return &attribution{comm: comm, peer: peer, sleeping: map[string]string{},
		sleeps: map[string]int{}, pairs: map[pair]int{}}
}

var (
	headRE   = regexp.MustCompile(`^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+(sched:\S+):\s*(.*)$`)
	switchRE = regexp.MustCompile(`prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.*? next_pid=(\d+)`)
	wakeRE   = regexp.MustCompile(`comm=(.*?) pid=(\d+)`)
)

// read consumes perf script output: an event line, its call chain, a blank line.
func (a *attribution) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var head string
	var frames []string
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			a.event(head, frames)
			head, frames = "", frames[:0]
			continue
		}
		if head == "" {
			head = line
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 {
			frames = append(frames, f[1])
		}
	}
	a.event(head, frames)
	return sc.Err()
}

func (a *attribution) event(head string, frames []string) {
	m := headRE.FindStringSubmatch(head)
	if m == nil {
		return
	}
	wcomm, ev, rest := m[1], m[4], m[5]
	switch ev {
	case "sched:sched_switch":
		s := switchRE.FindStringSubmatch(rest)
		if s == nil {
			return
		}
		// A sleep ended with no recorded wake-up: the idle CPU's timer woke it, unrecorded.
		for _, tid := range []string{s[4], s[2]} {
			if where, ok := a.sleeping[tid]; ok {
				delete(a.sleeping, tid)
				a.pairs[pair{where, unrecorded, "the idle CPU"}]++
			}
		}
		if s[1] != a.comm {
			return
		}
		if strings.HasPrefix(s[3], "R") {
			a.invol++
			return
		}
		where := sleepSite(frames)
		a.sleeping[s[2]] = where
		a.sleeps[where]++
	case "sched:sched_waking", "sched:sched_wakeup":
		w := wakeRE.FindStringSubmatch(rest)
		if w == nil {
			return
		}
		where, ok := a.sleeping[w[2]]
		if !ok {
			return
		}
		delete(a.sleeping, w[2])
		waker := "another task or an interrupt"
		switch wcomm {
		case a.comm:
			waker = "itself (" + a.comm + ")"
		case a.peer:
			waker = "the peer (" + a.peer + ")"
		}
		a.pairs[pair{where, wakeCause(frames), waker}]++
	}
}

func has(frames []string, subs ...string) bool {
	for _, f := range frames {
		for _, s := range subs {
			if strings.Contains(f, s) {
				return true
			}
		}
	}
	return false
}

// sleepSite names where a thread blocked, from its own stack.
func sleepSite(frames []string) string {
	switch {
	case has(frames, "runtime.sysmon") && has(frames, "nanosleep"):
		return "sysmon: usleep between its checks (nanosleep)"
	case has(frames, "runtime.sysmon") && has(frames, "notetsleep"):
		return "sysmon: parked because every P is idle (futex)"
	case has(frames, "runtime.sysmon"):
		return "sysmon: other (futex on a runtime lock)"
	case has(frames, "do_epoll_wait") && has(frames, "runtime.netpoll"):
		return "the P is idle: its M blocks in epoll_wait (runtime.netpoll)"
	case has(frames, "runtime.stopm"):
		return "an idle M parks (stopm, futex)"
	case has(frames, "futex"):
		return "other futex wait"
	case has(frames, "nanosleep"):
		return "nanosleep outside sysmon"
	}
	return "other: " + strings.Join(frames[:min(len(frames), 6)], " ")
}

// wakeCause names what ended a sleep, from the waker's stack.
func wakeCause(frames []string) string {
	switch {
	case has(frames, "timerfd_tmrproc"):
		return "timerfd expired (the dispatcher's fine wait)"
	case has(frames, "sock_def_readable", "tcp_rcv", "tcp_data_queue"):
		return "a socket became readable (the peer wrote: a response, or for the server a request)"
	case has(frames, "sock_def_write_space", "tcp_check_space"):
		return "a socket became writable"
	case has(frames, "eventfd"):
		return "eventfd write (runtime.netpollBreak)"
	case has(frames, "futex_wake"):
		var rt []string
		for _, f := range frames {
			switch f {
			case "runtime.futex.abi0", "runtime.futexwakeup", "runtime.notewakeup", "runtime.systemstack.abi0",
				"runtime.semawakeup", "runtime.unlock2", "runtime.unlock2Wake":
				continue
			}
			if strings.HasPrefix(f, "runtime.") {
				rt = append(rt, f)
			}
		}
		if len(rt) > 2 {
			rt = rt[:2]
		}
		return "futex wake from " + strings.Join(rt, " ← ")
	case has(frames, "hrtimer_wakeup"):
		return "its own timeout expired (hrtimer: nanosleep, or epoll_wait's timeout = the next runtime timer)"
	case has(frames, "signal"):
		return "a signal"
	}
	return "other: " + strings.Join(frames[:min(len(frames), 6)], " ")
}

func (a *attribution) print(w io.Writer, reqs float64) {
	total := 0
	for _, n := range a.sleeps {
		total += n
	}
	fmt.Fprintf(w, "voluntary sleeps of %s's threads: %d = %.2f per request (%.0f requests); involuntary: %.2f per request\n\n",
		a.comm, total, float64(total)/reqs, reqs, float64(a.invol)/reqs)
	fmt.Fprintf(w, "| where the thread slept | per request | sleeps |\n| --- | ---: | ---: |\n")
	for _, k := range sortedKeys(a.sleeps) {
		fmt.Fprintf(w, "| %s | %.2f | %d |\n", k, float64(a.sleeps[k])/reqs, a.sleeps[k])
	}
	paired := 0
	for _, n := range a.pairs {
		paired += n
	}
	fmt.Fprintf(w, "\n| where it slept | what woke it | waker | per request | sleeps |\n| --- | --- | --- | ---: | ---: |\n")
	keys := make([]pair, 0, len(a.pairs))
	for k := range a.pairs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a.pairs[keys[i]] != a.pairs[keys[j]] {
			return a.pairs[keys[i]] > a.pairs[keys[j]]
		}
		return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j])
	})
	for _, k := range keys {
		if float64(a.pairs[k])/reqs < 0.005 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f | %d |\n", k.sleep, k.cause, k.waker, float64(a.pairs[k])/reqs, a.pairs[k])
	}
	fmt.Fprintf(w, "\n%d of %d sleeps paired with the wake-up that ended them (rows under 0.005 per request left out).\n", paired, total)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	return keys
}

// printLateness prints a result's lateness summary on one line.
func printLateness(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r struct {
		Offered  int64 `json:"offered"`
		Lateness struct {
			Count         int64
			P50, P99, Max float64
		} `json:"lateness_ms"`
		Stalled float64 `json:"stalled_seconds"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	l := r.Lateness
	_, err = fmt.Fprintf(w, "p50 %.3f ms, p99 %.3f ms, max %.3f ms (n=%d of %d offered), stalled %.3f s\n", l.P50, l.P99, l.Max, l.Count, r.Offered, r.Stalled)
	return err
}
