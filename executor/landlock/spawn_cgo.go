//go:build linux && cgo

package landlock

// With cgo, commands are started by cordon_spawn: a vfork whose child
// restricts itself — new session, standard descriptors, every other
// descriptor close-on-exec, working directory, no capabilities,
// no_new_privs, the seccomp filter, landlock_restrict_self — and then
// executes the command. That is the fork+exec of a bare command with a
// few system calls between, and the child still gets a Landlock domain
// of its own (see doc.go). Without cgo the sandbox helper (Init) does
// the same after one more exec.

/*
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

// Stages of the child, reported with errno when one fails.
enum {
	CORDON_PIPE = 1, CORDON_FORK, CORDON_SETSID, CORDON_DUP, CORDON_CLOSE_RANGE, CORDON_CHDIR,
	CORDON_CAPS, CORDON_NO_NEW_PRIVS, CORDON_SECCOMP, CORDON_LANDLOCK, CORDON_EXEC,
	CORDON_UNSHARE, CORDON_SETNS, CORDON_PRIVATE, CORDON_BIND, CORDON_REMOUNT, CORDON_IDMAP, CORDON_CGROUP,
	CORDON_NET_LO, CORDON_NET_LISTEN, CORDON_NET_SEND, CORDON_CTTY,
};

// cordon_net_listen brings lo up in the child's new network namespace,
// listens on 127.0.0.1:port and sends the listener over the Unix socket
// fd (SCM_RIGHTS) to the executor, which serves its proxy on it: system
// calls only (vfork child). It returns the failed stage, or 0.
static int cordon_net_listen(int fd, int port) {
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return CORDON_NET_LO;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
		int e = errno;
		close(s);
		errno = e;
		return CORDON_NET_LO;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) {
		int e = errno;
		close(s);
		errno = e;
		return CORDON_NET_LO;
	}
	close(s);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return CORDON_NET_LISTEN;
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 128) != 0) {
		int e = errno;
		close(l);
		errno = e;
		return CORDON_NET_LISTEN;
	}
	char byte = 0;
	struct iovec iov = {&byte, 1};
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
	memset(&u, 0, sizeof u);
	struct msghdr msg;
	memset(&msg, 0, sizeof msg);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof u.buf;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &l, sizeof(int));
	ssize_t n;
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	int e = errno;
	close(l);
	errno = e;
	return n == 1 ? 0 : CORDON_NET_SEND;
}

// cordon_write_file writes s to path: system calls only (vfork child).
static int cordon_write_file(const char *path, const char *s) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(s);
	ssize_t n = write(fd, s, len);
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)len ? 0 : -1;
}

// cordon_mounts is the mount namespace a command started as root gets
// (mountPlan in mountns_linux.go): writable grants bound onto themselves,
// every other mount point remounted read-only. n_ro < 0: none.
struct cordon_mounts {
	// userns: unshare a user namespace too and map uid_map and gid_map
	// ("UID UID 1") in it, setgroups denied.
	int userns;
	char *uid_map, *gid_map;
	// net_fd >= 0 (with userns): unshare a network namespace too and send
	// a listener on 127.0.0.1:net_port over net_fd (cordon_net_listen).
	int net_fd, net_port;
	// ns_mnt >= 0: join that mount namespace (after ns_user, when >= 0)
	// instead of making one; the fields below are then unused.
	int ns_mnt, ns_user;
	char **wr;
	int n_wr;
	// mk are bound onto themselves after wr (and are in ro too); one
	// that is gone is skipped.
	char **mk;
	int n_mk;
	char **ro;
	unsigned long *ro_flags;
	int n_ro;
};

struct cordon_report { int32_t stage, err; };

static void cordon_child_fail(int fd, int stage) {
	struct cordon_report r = {stage, errno};
	ssize_t n = write(fd, &r, sizeof r);
	(void)n;
	_exit(127);
}

// cordon_spawn starts path with argv and envp in a new session, with
// fds[i] as descriptor i (i < nfds), in dir, restricted: no capabilities,
// no_new_privs, the seccomp program (len 0: none), the Landlock ruleset
// (rulesetfd < 0: none). It returns the child's pid, or -1 with *stage and
// *err saying what failed.
static int cordon_spawn(const char *path, char **argv, char **envp, const char *dir, int *fds, int nfds,
                        int rulesetfd, unsigned flags, struct sock_filter *prog, unsigned short len,
                        struct cordon_mounts *mnt, const char *cgroup_procs, int ctty, int *stage, int *err) {
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		*stage = CORDON_PIPE, *err = errno;
		return -1;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = vfork();
	if (pid == 0) {
		// The child shares the parent's memory until it execs: only
		// system calls from here on. Signals stay blocked until the
		// handlers the parent installed are reset.
		for (int s = 1; s < NSIG; s++) {
			struct sigaction sa;
			if (syscall(SYS_rt_sigaction, s, NULL, &sa, _NSIG / 8) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) {
				memset(&sa, 0, sizeof sa);
				sa.sa_handler = SIG_DFL;
				syscall(SYS_rt_sigaction, s, &sa, NULL, _NSIG / 8);
			}
		}
		sigset_t none;
		sigemptyset(&none);
		int ep = p[1];
		if (setsid() < 0)
			cordon_child_fail(ep, CORDON_SETSID);
		// Into the command's own cgroup first, so everything it starts
		// is killed with it (cgroup_linux.go).
		if (cgroup_procs != NULL && cordon_write_file(cgroup_procs, "0") != 0)
			cordon_child_fail(ep, CORDON_CGROUP);
		if (ep < nfds && (ep = fcntl(ep, F_DUPFD_CLOEXEC, nfds)) < 0)
			cordon_child_fail(p[1], CORDON_DUP);
		if (rulesetfd >= 0 && rulesetfd < nfds && (rulesetfd = fcntl(rulesetfd, F_DUPFD_CLOEXEC, nfds)) < 0)
			cordon_child_fail(ep, CORDON_DUP);
		// A local copy: the child shares the parent's memory.
		int netfd = mnt != NULL ? mnt->net_fd : -1;
		if (netfd >= 0 && netfd < nfds && (netfd = fcntl(netfd, F_DUPFD_CLOEXEC, nfds)) < 0)
			cordon_child_fail(ep, CORDON_DUP);
		// The kept namespace's descriptors, likewise moved out of the
		// way of the dup2 below.
		int nsmnt = mnt != NULL ? mnt->ns_mnt : -1, nsuser = mnt != NULL ? mnt->ns_user : -1;
		if (nsmnt >= 0 && nsmnt < nfds && (nsmnt = fcntl(nsmnt, F_DUPFD_CLOEXEC, nfds)) < 0)
			cordon_child_fail(ep, CORDON_DUP);
		if (nsuser >= 0 && nsuser < nfds && (nsuser = fcntl(nsuser, F_DUPFD_CLOEXEC, nfds)) < 0)
			cordon_child_fail(ep, CORDON_DUP);
		for (int i = 0; i < nfds; i++)
			if (fds[i] < nfds && fds[i] != i && (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, nfds)) < 0)
				cordon_child_fail(ep, CORDON_DUP);
		for (int i = 0; i < nfds; i++) {
			int r = fds[i] == i ? fcntl(i, F_SETFD, 0) : dup2(fds[i], i);
			if (r < 0)
				cordon_child_fail(ep, CORDON_DUP);
		}
		// A terminal of the command's own (procgroup Stdio.Terminal):
		// descriptor 0 becomes the new session's controlling terminal.
		if (ctty && ioctl(0, TIOCSCTTY, 0) != 0)
			cordon_child_fail(ep, CORDON_CTTY);
		if (syscall(SYS_close_range, nfds, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
			if (errno != ENOSYS && errno != EINVAL)
				cordon_child_fail(ep, CORDON_CLOSE_RANGE);
			// Linux < 5.11 (no Landlock either: best effort): mark
			// every descriptor up to the limit by hand.
			struct rlimit rl;
			if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
				cordon_child_fail(ep, CORDON_CLOSE_RANGE);
			rlim_t max = rl.rlim_cur < (1 << 20) ? rl.rlim_cur : (1 << 20);
			for (rlim_t i = nfds; i < max; i++)
				if (fcntl((int)i, F_SETFD, FD_CLOEXEC) != 0 && errno != EBADF)
					cordon_child_fail(ep, CORDON_CLOSE_RANGE);
		}
		if (mnt != NULL) {
			// After the descriptors (opened in the parent's namespace,
			// unaffected) and before chdir, so the working directory
			// is looked up on the new mounts.
			if (nsmnt >= 0) {
				// A kept namespace (keptns_linux.go): join it.
				if (nsuser >= 0 && setns(nsuser, CLONE_NEWUSER) != 0)
					cordon_child_fail(ep, CORDON_SETNS);
				if (setns(nsmnt, CLONE_NEWNS) != 0)
					cordon_child_fail(ep, CORDON_SETNS);
				if (netfd >= 0 && unshare(CLONE_NEWNET) != 0)
					cordon_child_fail(ep, CORDON_UNSHARE);
			} else {
				if (unshare(CLONE_NEWNS | (mnt->userns ? CLONE_NEWUSER : 0) | (netfd >= 0 ? CLONE_NEWNET : 0)) != 0)
					cordon_child_fail(ep, CORDON_UNSHARE);
				if (mnt->userns && (cordon_write_file("/proc/self/uid_map", mnt->uid_map) != 0 ||
				                    cordon_write_file("/proc/self/setgroups", "deny") != 0 ||
				                    cordon_write_file("/proc/self/gid_map", mnt->gid_map) != 0))
					cordon_child_fail(ep, CORDON_IDMAP);
				if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
					cordon_child_fail(ep, CORDON_PRIVATE);
				for (int i = 0; i < mnt->n_wr; i++)
					if (mount(mnt->wr[i], mnt->wr[i], NULL, MS_BIND | MS_REC, NULL) != 0)
						cordon_child_fail(ep, CORDON_BIND);
				for (int i = 0; i < mnt->n_mk; i++)
					if (mount(mnt->mk[i], mnt->mk[i], NULL, MS_BIND | MS_REC, NULL) != 0 && errno != ENOENT)
						cordon_child_fail(ep, CORDON_BIND);
				for (int i = 0; i < mnt->n_ro; i++)
					if (mount(NULL, mnt->ro[i], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | mnt->ro_flags[i], NULL) != 0 &&
					    errno != ENOENT && errno != EINVAL && errno != EACCES)
						cordon_child_fail(ep, CORDON_REMOUNT);
			}
			if (netfd >= 0) {
				int st = cordon_net_listen(netfd, mnt->net_port);
				if (st != 0)
					cordon_child_fail(ep, st);
				close(netfd);
			}
		}
		if (dir != NULL && dir[0] != 0 && chdir(dir) != 0)
			cordon_child_fail(ep, CORDON_CHDIR);
		for (int c = 0; c < 64; c++) {
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
				continue;
			if (errno == EINVAL || errno == EPERM)
				break; // past the last capability, or none to drop
			cordon_child_fail(ep, CORDON_CAPS);
		}
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
			cordon_child_fail(ep, CORDON_CAPS);
		struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct data[2];
		memset(data, 0, sizeof data);
		if (syscall(SYS_capset, &hdr, data) != 0)
			cordon_child_fail(ep, CORDON_CAPS);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			cordon_child_fail(ep, CORDON_NO_NEW_PRIVS);
		if (len > 0) {
			struct sock_fprog fprog = {len, prog};
			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
				cordon_child_fail(ep, CORDON_SECCOMP);
		}
		if (rulesetfd >= 0 && syscall(SYS_landlock_restrict_self, rulesetfd, flags) != 0)
			cordon_child_fail(ep, CORDON_LANDLOCK);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8);
		execve(path, argv, envp);
		cordon_child_fail(ep, CORDON_EXEC);
	}
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		*stage = CORDON_FORK, *err = e;
		return -1;
	}
	struct cordon_report r;
	ssize_t n;
	do
		n = read(p[0], &r, sizeof r);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == sizeof r) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		*stage = r.stage, *err = r.err;
		return -1;
	}
	return pid;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// canSpawn is true where commands are started by cordon_spawn.
const canSpawn = true

var spawnStages = map[C.int]string{
	C.CORDON_PIPE: "pipe2", C.CORDON_FORK: "vfork", C.CORDON_SETSID: "setsid", C.CORDON_DUP: "dup2",
	C.CORDON_CLOSE_RANGE: "close_range", C.CORDON_CHDIR: "chdir", C.CORDON_CAPS: "dropping capabilities",
	C.CORDON_NO_NEW_PRIVS: "prctl(PR_SET_NO_NEW_PRIVS)", C.CORDON_SECCOMP: "seccomp(SECCOMP_SET_MODE_FILTER)",
	C.CORDON_LANDLOCK: "landlock_restrict_self", C.CORDON_EXEC: "exec",
	C.CORDON_UNSHARE: "unshare(CLONE_NEWNS)", C.CORDON_PRIVATE: "making the mounts private",
	C.CORDON_SETNS: "joining the kept mount namespace", C.CORDON_BIND: "binding a writable grant or a mask", C.CORDON_REMOUNT: "remounting read-only",
	C.CORDON_IDMAP: "writing the user namespace's uid and gid maps", C.CORDON_CGROUP: "joining the command's cgroup",
	C.CORDON_NET_LO: "bringing up lo in the command's network namespace", C.CORDON_NET_LISTEN: "listening for the allow-list proxy",
	C.CORDON_NET_SEND: "handing the proxy's listener to the executor", C.CORDON_CTTY: "ioctl(TIOCSCTTY)",
}

// spawner returns a procgroup StartProcess that starts each command
// restricted by rs, in a new session, in the cgroup whose cgroup.procs
// file is cgroupProcs ("": none).
//
// With h (user-namespace mounts only) the child also unshares a network
// namespace and hands its proxy listener over h, which serves it before
// the spawn returns.
func spawner(rs *ruleset, cgroupProcs string, h *netHandoff, kept *keptNS) func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
		if h != nil && rs.mounts != mountsUserNS {
			return nil, fmt.Errorf("landlock: starting %s: a network namespace of the command's own needs the user-namespace mounts", name)
		}
		prog, err := decodeFilter(rs.filter)
		if err != nil {
			return nil, err
		}
		var cstrs []*C.char
		cstr := func(s string) *C.char {
			c := C.CString(s)
			cstrs = append(cstrs, c)
			return c
		}
		defer func() {
			for _, c := range cstrs {
				C.free(unsafe.Pointer(c))
			}
		}()
		vec := func(ss []string) **C.char {
			v := C.malloc(C.size_t(len(ss)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
			cstrs = append(cstrs, (*C.char)(v))
			a := unsafe.Slice((**C.char)(v), len(ss)+1)
			for i, s := range ss {
				a[i] = cstr(s)
			}
			a[len(ss)] = nil
			return (**C.char)(v)
		}
		cpath, cdir := cstr(name), cstr(attr.Dir)
		cargv, cenv := vec(argv), vec(attr.Env)
		fds := (*C.int)(C.malloc(C.size_t(len(attr.Files)+1) * C.size_t(unsafe.Sizeof(C.int(0)))))
		cstrs = append(cstrs, (*C.char)(unsafe.Pointer(fds)))
		fa := unsafe.Slice(fds, len(attr.Files)+1)
		for i, f := range attr.Files {
			if f == nil {
				return nil, fmt.Errorf("landlock: descriptor %d of %s is nil", i, name)
			}
			fa[i] = C.int(f.Fd())
		}
		rfd := C.int(-1)
		if rs.file != nil {
			fd := rs.file.Fd()
			if fd == ^uintptr(0) {
				// Closed: never start without the Landlock layer.
				return nil, fmt.Errorf("landlock: starting %s: the ruleset was closed", name)
			}
			rfd = C.int(fd)
		}
		var cprog *C.struct_sock_filter
		if len(prog) > 0 {
			p := C.malloc(C.size_t(len(prog)) * C.size_t(unsafe.Sizeof(unix.SockFilter{})))
			cstrs = append(cstrs, (*C.char)(p))
			copy(unsafe.Slice((*unix.SockFilter)(p), len(prog)), prog)
			cprog = (*C.struct_sock_filter)(p)
		}
		var cmnt *C.struct_cordon_mounts
		if rs.mounts != mountsNone && kept != nil {
			m := (*C.struct_cordon_mounts)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_cordon_mounts{}))))
			cstrs = append(cstrs, (*C.char)(unsafe.Pointer(m)))
			m.net_fd, m.ns_mnt, m.ns_user = -1, C.int(kept.mnt.Fd()), -1
			if kept.user != nil {
				m.ns_user = C.int(kept.user.Fd())
			}
			if h != nil {
				m.net_fd, m.net_port = C.int(h.child.Fd()), C.int(policyderive.ProxyPort)
			}
			cmnt = m
		} else if rs.mounts != mountsNone {
			mp, err := newMountPlan(rs.writable, rs.masks)
			if err != nil {
				return nil, fmt.Errorf("landlock: starting %s: %w", name, err)
			}
			m := (*C.struct_cordon_mounts)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_cordon_mounts{}))))
			cstrs = append(cstrs, (*C.char)(unsafe.Pointer(m)))
			m.net_fd, m.ns_mnt, m.ns_user = -1, -1, -1
			if h != nil {
				m.net_fd, m.net_port = C.int(h.child.Fd()), C.int(policyderive.ProxyPort)
			}
			if rs.mounts == mountsUserNS {
				m.userns = 1
				m.uid_map = cstr(fmt.Sprintf("%d %d 1", os.Geteuid(), os.Geteuid()))
				m.gid_map = cstr(fmt.Sprintf("%d %d 1", os.Getegid(), os.Getegid()))
			}
			m.wr, m.n_wr = vec(mp.writable), C.int(len(mp.writable))
			m.mk, m.n_mk = vec(mp.masks), C.int(len(mp.masks))
			m.ro, m.n_ro = vec(mp.readonly), C.int(len(mp.readonly))
			fl := C.malloc(C.size_t(len(mp.flags)+1) * C.size_t(unsafe.Sizeof(C.ulong(0))))
			cstrs = append(cstrs, (*C.char)(fl))
			fa := unsafe.Slice((*C.ulong)(fl), len(mp.flags)+1)
			for i, f := range mp.flags {
				fa[i] = C.ulong(f)
			}
			m.ro_flags = (*C.ulong)(fl)
			cmnt = m
		}
		var ccg *C.char
		if cgroupProcs != "" {
			ccg = cstr(cgroupProcs)
		}
		var stage, errno C.int
		ctty := C.int(0)
		if attr.Sys != nil && attr.Sys.Setctty {
			ctty = 1
		}
		pid := C.cordon_spawn(cpath, cargv, cenv, cdir, fds, C.int(len(attr.Files)), rfd, C.uint(rs.flags),
			cprog, C.ushort(len(prog)), cmnt, ccg, ctty, &stage, &errno)
		runtime.KeepAlive(attr.Files)
		runtime.KeepAlive(rs)
		runtime.KeepAlive(kept)
		if pid < 0 {
			e := syscall.Errno(errno)
			switch stage {
			case C.CORDON_EXEC:
				return nil, &os.PathError{Op: "fork/exec", Path: name, Err: e}
			case C.CORDON_CHDIR:
				return nil, &os.PathError{Op: "chdir", Path: attr.Dir, Err: e}
			}
			return nil, fmt.Errorf("landlock: starting %s: %s: %w", name, spawnStages[stage], e)
		}
		p, err := os.FindProcess(int(pid))
		if err == nil && h != nil {
			runtime.KeepAlive(h)
			if err = h.receive(); err != nil {
				killStarted(p)
				return nil, fmt.Errorf("landlock: starting %s: %w", name, err)
			}
		}
		return p, err
	}
}
