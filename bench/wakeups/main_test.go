package main

import (
	"strings"
	"testing"
)

// A few events in `perf script -F comm,tid,cpu,event,trace,ip,sym` form:
// the generator's M sleeps in the poller and the server's softirq wakes it;
// sysmon parks and a syscall of the generator wakes it; one preemption.
const sample = `loadgate 101 [001] sched:sched_switch: prev_comm=loadgate prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
	ffffffff82265908 __schedule
	ffffffff81753558 do_epoll_wait
	            d3ce internal/runtime/syscall/linux.Syscall6
	           4e714 runtime.netpoll
	           5b55f runtime.findRunnable

server 200 [000] sched:sched_waking: comm=loadgate pid=101 prio=120 target_cpu=001
	ffffffff813b4a09 try_to_wake_up
	ffffffff81752e29 ep_poll_callback
	ffffffff81e82f7e sock_def_readable
	ffffffff8207f299 tcp_rcv_established

loadgate 102 [001] sched:sched_switch: prev_comm=loadgate prev_pid=102 prev_prio=120 prev_state=S ==> next_comm=loadgate next_pid=101 next_prio=120
	ffffffff82265908 __schedule
	ffffffff8144aee3 futex_wait
	           22ea5 runtime.notetsleep_internal
	           22ea6 runtime.notetsleep
	           5e39f runtime.sysmon

loadgate 101 [001] sched:sched_waking: comm=loadgate pid=102 prio=120 target_cpu=001
	ffffffff813b4a09 try_to_wake_up
	ffffffff8144eb79 futex_wake
	           942a3 runtime.futex.abi0
	           22ea5 runtime.notewakeup
	           5e39f runtime.entersyscallWakeSysmon
	           90cea runtime.systemstack.abi0
	           5e0de runtime.reentersyscall

loadgate 101 [001] sched:sched_switch: prev_comm=loadgate prev_pid=101 prev_prio=120 prev_state=R+ ==> next_comm=other next_pid=300 next_prio=120
	ffffffff82265908 __schedule

`

func TestAttribution(t *testing.T) {
	a := newAttribution("loadgate", "server")
	if err := a.read(strings.NewReader(sample)); err != nil {
		t.Fatal(err)
	}
	want := map[pair]int{
		{"the P is idle: its M blocks in epoll_wait (runtime.netpoll)", "a socket became readable (the peer wrote: a response, or for the server a request)", "the peer (server)"}: 1,
		{"sysmon: parked because every P is idle (futex)", "futex wake from runtime.entersyscallWakeSysmon ← runtime.reentersyscall", "itself (loadgate)"}:                         1,
	}
	if len(a.pairs) != len(want) {
		t.Fatalf("pairs %v", a.pairs)
	}
	for k, n := range want {
		if a.pairs[k] != n {
			t.Errorf("%v: %d, want %d (all: %v)", k, a.pairs[k], n, a.pairs)
		}
	}
	if a.invol != 1 {
		t.Errorf("involuntary %d, want 1", a.invol)
	}
	var out strings.Builder
	a.print(&out, 1)
	if !strings.Contains(out.String(), "= 2.00 per request") {
		t.Errorf("summary:\n%s", out.String())
	}
}
