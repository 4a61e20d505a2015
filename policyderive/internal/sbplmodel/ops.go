package sbplmodel

import (
	"slices"
	"strings"
)

// Operations lists the concrete Seatbelt operations the model knows, from
// the operation table of recent macOS. A rule names one of them, or a
// prefix followed by "*" that covers every operation starting with it
// ("file-read*" covers file-read-data, file-read-metadata and
// file-read-xattr). Names match exactly otherwise: "process-exec" does
// not cover process-exec-interpreter.
var Operations = []string{
	"appleevent-send", "authorization-right-obtain", "boot-arg-set",
	"device-camera", "device-microphone", "distributed-notification-post", "dynamic-code-generation",
	"file-chroot", "file-clone", "file-ioctl", "file-issue-extension", "file-link", "file-lock",
	"file-map-executable", "file-mknod", "file-mount", "file-mount-update",
	"file-read-data", "file-read-metadata", "file-read-xattr", "file-revoke", "file-search",
	"file-test-existence", "file-unmount",
	"file-write-acl", "file-write-create", "file-write-data", "file-write-flags", "file-write-mode",
	"file-write-owner", "file-write-setugid", "file-write-times", "file-write-unlink", "file-write-xattr",
	"generic-issue-extension", "hid-control",
	"iokit-get-properties", "iokit-issue-extension", "iokit-open", "iokit-set-properties",
	"ipc-posix-issue-extension", "ipc-posix-sem-create", "ipc-posix-sem-open", "ipc-posix-sem-post",
	"ipc-posix-sem-unlink", "ipc-posix-sem-wait", "ipc-posix-shm-read-data", "ipc-posix-shm-read-metadata",
	"ipc-posix-shm-write-create", "ipc-posix-shm-write-data", "ipc-posix-shm-write-unlink",
	"ipc-sysv-msg", "ipc-sysv-sem", "ipc-sysv-shm",
	"job-creation", "load-unsigned-code", "lsopen",
	"mach-bootstrap", "mach-cross-domain-lookup", "mach-derive-port", "mach-issue-extension", "mach-lookup",
	"mach-per-user-lookup", "mach-priv-host-port", "mach-priv-task-port", "mach-register", "mach-task-name",
	"network-bind", "network-inbound", "network-outbound",
	"nvram-delete", "nvram-get", "nvram-set",
	"process-codesigning-status-get", "process-codesigning-status-set",
	"process-exec", "process-exec-interpreter", "process-fork",
	"process-info-codesignature", "process-info-dirtycontrol", "process-info-listpids", "process-info-pidfdinfo",
	"process-info-pidfileportinfo", "process-info-pidinfo", "process-info-rusage", "process-info-setcontrol",
	"pseudo-tty", "signal", "socket-ioctl", "socket-option-get", "socket-option-set",
	"sysctl-read", "sysctl-write",
	"system-acct", "system-audit", "system-chud", "system-debug", "system-fsctl", "system-info",
	"system-kext-load", "system-kext-unload", "system-mac-label", "system-nfssvc", "system-privilege",
	"system-reboot", "system-sched", "system-set-time", "system-socket", "system-suspend-resume", "system-swap",
	"user-preference-read", "user-preference-write",
}

// isOperation reports whether name is a known concrete operation.
func isOperation(name string) bool {
	_, ok := slices.BinarySearch(sortedOps, name)
	return ok
}

var sortedOps = func() []string {
	s := slices.Clone(Operations)
	slices.Sort(s)
	return s
}()

// opSpec is an operation as a rule names it.
type opSpec struct {
	name   string // without the "*"
	prefix bool
}

func (o opSpec) covers(op string) bool {
	return op == o.name || (o.prefix && strings.HasPrefix(op, o.name+"-"))
}

func (o opSpec) String() string {
	if o.prefix {
		return o.name + "*"
	}
	return o.name
}

// parseOp checks a rule's operation name: a known operation, or a prefix
// with "*" that covers at least one.
func parseOp(name string) (opSpec, bool) {
	if base, ok := strings.CutSuffix(name, "*"); ok {
		o := opSpec{name: base, prefix: true}
		if base == "" || strings.Contains(base, "*") || strings.HasSuffix(base, "-") {
			return opSpec{}, false
		}
		return o, slices.ContainsFunc(sortedOps, o.covers)
	}
	return opSpec{name: name}, isOperation(name)
}
