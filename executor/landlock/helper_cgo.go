//go:build linux && cgo

package landlock

// The sandbox helper's fast path: with cgo, this constructor runs when the
// dynamic loader starts the re-executed binary, before the Go runtime and
// every package initialiser, and does what helperExec does (see
// helper_linux.go for the command line), so a command costs the exec of
// this binary and of /bin/sh but not a Go start-up. It acts only under
// the helper's argv[0] and only with glibc, which passes argc, argv and
// envp to constructors; otherwise it returns and Init does the work.
// Every failure exits 126 with the reason, as Init does.

/*
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static void cordon_fail(const char *what, int err) {
	if (err)
		fprintf(stderr, "cordon: landlock sandbox: %s: %s\n", what, strerror(err));
	else
		fprintf(stderr, "cordon: landlock sandbox: %s\n", what);
	_exit(126);
}

static int cordon_number(const char *s, long min, long max, long *out) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int cordon_hex(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	return -1;
}

static void cordon_drop_capabilities(void) {
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL || errno == EPERM)
			break; // past the last capability, or none to drop
		cordon_fail("prctl(PR_CAPBSET_DROP)", errno);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		cordon_fail("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", errno);
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0)
		cordon_fail("capset", errno);
}

#ifdef __GLIBC__
__attribute__((constructor)) static void cordon_landlock_helper(int argc, char **argv, char **envp) {
	(void)envp;
	if (argc < 1 || argv == NULL || argv[0] == NULL || strcmp(argv[0], "cordon-landlock-sandbox") != 0)
		return;
	long fd, flags, nenv;
	if (argc < 7 || cordon_number(argv[1], -1, 1 << 20, &fd) || cordon_number(argv[2], 0, 0xffffffffL, &flags) ||
	    cordon_number(argv[4], 0, argc - 7, &nenv))
		cordon_fail("malformed helper command line", 0);
	const char *hex = argv[3];
	size_t n = strlen(hex);
	struct sock_filter *prog = NULL;
	unsigned short len = 0;
	if (strcmp(hex, "-") != 0) {
		if (n == 0 || n % 16 != 0 || n / 16 > 4096)
			cordon_fail("malformed seccomp program", 0);
		unsigned char *b = malloc(n / 2);
		if (b == NULL)
			cordon_fail("malloc", ENOMEM);
		for (size_t i = 0; i < n / 2; i++) {
			int hi = cordon_hex(hex[2 * i]), lo = cordon_hex(hex[2 * i + 1]);
			if (hi < 0 || lo < 0)
				cordon_fail("malformed seccomp program", 0);
			b[i] = (unsigned char)(hi << 4 | lo);
		}
		// encodeFilter writes struct sock_filter's layout: code (16 bits),
		// jt, jf, k (32 bits), in host byte order.
		prog = (struct sock_filter *)b;
		len = (unsigned short)(n / 16);
	}
	char **env = argv + 5;
	char *path = argv[5 + nenv];
	char **args = argv + 6 + nenv;
	char **envv = malloc((nenv + 1) * sizeof *envv);
	if (envv == NULL)
		cordon_fail("malloc", ENOMEM);
	memcpy(envv, env, nenv * sizeof *envv);
	envv[nenv] = NULL;

	cordon_drop_capabilities();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		cordon_fail("prctl(PR_SET_NO_NEW_PRIVS)", errno);
	if (prog != NULL) {
		struct sock_fprog fprog = {len, prog};
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
			cordon_fail("seccomp(SECCOMP_SET_MODE_FILTER)", errno);
	}
	if (fd >= 0) {
		if (syscall(SYS_landlock_restrict_self, (int)fd, (unsigned)flags) != 0)
			cordon_fail("landlock_restrict_self", errno);
		close((int)fd);
	}
	execve(path, args, envv);
	cordon_fail(path, errno);
}
#endif
*/
import "C"
