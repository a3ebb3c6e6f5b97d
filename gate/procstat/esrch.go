package procstat

import "syscall"

// errESRCH: reading /proc/PID of a process that exited between open and read.
var errESRCH error = syscall.ESRCH
