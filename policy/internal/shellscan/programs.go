package shellscan

import "strings"

// runOpts are the options, per program, that make it run or load code the
// command names (go test -exec, make --eval, rsync -e, ...). One table,
// with programOpaque below: an option listed here makes the segment
// opaque. A value given as "--opt=value" or, for a short option,
// attached ("-ofoo") matches too.
var runOpts = map[string][]string{
	"go":     {"-exec", "-toolexec", "-vettool", "-overlay", "-modfile", "-pgo", "-fuzz"},
	"make":   {"--eval", "-E", "-f", "--file", "--makefile", "--include-dir", "-I"},
	"gmake":  {"--eval", "-E", "-f", "--file", "--makefile", "--include-dir", "-I"},
	"npm":    {"--script-shell", "-c", "--call", "--node-options", "--prefix", "--userconfig", "--globalconfig"},
	"rsync":  {"-e", "--rsh", "--rsync-path"},
	"scp":    {"-S", "-o", "-F", "-J"},
	"ssh":    {"-o", "-F", "-J"},
	"sort":   {"--compress-program"},
	"zip":    {"-TT", "--unzip-command"},
	"script": {"-c", "--command"},
	"su":     {"-c", "--command", "--session-command"},
	"gdb":    {"-ex", "-x", "--command", "--eval-command", "-iex", "-ix"},
	"less":   {"--lesskey-file", "--lesskey-src"},
	"curl":   {"-K", "--config"},
	"wget":   {"-e", "--execute", "--config"},
	"grep":   {"--pre"},
	"rg":     {"--pre"},
	"diff":   {"--diff-program"},
	"sdiff":  {"--diff-program"},
	"diff3":  {"--diff-program"},
	"awk":    {"-W", "--exec", "-f", "--file", "-E"},
	"patch":  {"--merge"},
	"split":  {"--filter"},
	"tar": {"--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command",
		"--checkpoint-action", "--transform", "--xform", "-P", "--absolute-names", "--index-file", "-g", "--listed-incremental"},
}

// runSubcommands are subcommands that run code the gate cannot read.
var runSubcommands = map[string][]string{
	"go":    {"generate", "tool"},
	"npm":   {"exec", "x", "explore", "config", "set-script", "set", "edit"},
	"pnpm":  {"exec", "dlx", "create", "config"},
	"yarn":  {"exec", "dlx", "create", "config"},
	"bun":   {"x", "create"},
	"cargo": {"install", "--config"},
}

// alwaysOpaque are programs whose every use runs code the gate cannot read:
// package runners, editors that read commands, command runners.
var alwaysOpaque = map[string]string{
	"npx": "runs a package's code", "pnpx": "runs a package's code", "bunx": "runs a package's code",
	"ed": "reads editor commands, which can run programs", "ex": "reads editor commands, which can run programs",
	"vi": "reads editor commands, which can run programs", "vim": "reads editor commands, which can run programs",
	"nvim": "reads editor commands, which can run programs", "emacs": "evaluates Lisp", "parallel": "runs commands it builds",
	"watch": "runs a command string", "flock": "runs a command", "strace": "runs a program", "ltrace": "runs a program",
	"unshare": "runs a program", "nsenter": "runs a program", "chroot": "runs a program", "runuser": "runs a program",
	"chrt": "runs a program", "taskset": "runs a program", "setarch": "runs a program", "prlimit": "runs a program",
	"linux32": "runs a program", "linux64": "runs a program", "schedtool": "runs a program", "cpulimit": "runs a program",
	"fakeroot": "runs a program", "faketime": "runs a program", "firejail": "runs a program", "systemd-run": "runs a program",
	"history": "writes the shell's history file", "fc": "runs commands from the history",
	"sqlite3": "runs SQL and dot-commands that read, write and run anything", "duckdb": "runs SQL that reads and writes files",
	"expect": "runs a script", "tclsh": "runs a script", "lua": "runs a script", "php": "runs a script",
	"osascript": "runs a script", "R": "runs a script", "Rscript": "runs a script", "jshell": "runs Java",
}

// programOpaque returns why the program, with these arguments, runs code
// the gate cannot read, or "".
func programOpaque(name string, args []xword) string {
	if why, ok := alwaysOpaque[name]; ok {
		return name + " " + why + ", which the gate cannot read"
	}
	if strings.HasPrefix(name, "ld-") && strings.Contains(name, ".so") || name == "ld.so" {
		return name + " is the dynamic loader: it runs the program named after it"
	}
	for _, a := range args {
		if a.Kind != Literal {
			continue
		}
		if (name == "make" || name == "gmake") && isAssignment(a.Value) {
			return name + " " + a.Value + " overrides a variable its recipes may run"
		}
		v := a.Value
		if name == "go" && strings.HasPrefix(v, "--") {
			v = v[1:]
		}
		for _, o := range runOpts[name] {
			if optIs(v, o) {
				return name + " " + o + " runs code the gate cannot read"
			}
		}
		if name == "tar" && a.Value == args[0].Value && !strings.HasPrefix(v, "-") && strings.ContainsAny(v, "IF") {
			return "tar " + v + " (old-style options) runs a program the gate cannot read"
		}
	}
	if subs := runSubcommands[name]; subs != nil {
		for _, a := range args {
			if a.Kind != Literal || strings.HasPrefix(a.Value, "-") {
				continue
			}
			for _, s := range subs {
				if a.Value == s {
					return name + " " + s + " runs code the gate cannot read"
				}
			}
			if a.Value == "config" && configWrites(args) {
				return name + " config changes configuration that can run code"
			}
			break // only the first operand is the subcommand
		}
	}
	return ""
}

// configWrites reports a package manager's config subcommand that changes
// configuration (set, delete, edit) rather than reading it.
func configWrites(args []xword) bool {
	for _, a := range args {
		switch a.Value {
		case "get", "list", "ls":
			return false
		case "set", "delete", "rm", "edit", "fix":
			return true
		}
	}
	return len(args) > 1
}

// fileListOpts are options whose value is a file listing the files the
// program then reads (tar -T LIST): the names are only known at run time.
var fileListOpts = map[string][]string{
	"*":      {"--files0-from", "--pathspec-from-file", "--stdin-paths", "--files-from"},
	"file":   {"-f"},
	"md5sum": {"-c", "--check"}, "sha1sum": {"-c", "--check"}, "sha224sum": {"-c", "--check"},
	"sha256sum": {"-c", "--check"}, "sha384sum": {"-c", "--check"}, "sha512sum": {"-c", "--check"},
	"b2sum": {"-c", "--check"}, "cksum": {"-c", "--check"}, "shasum": {"-c", "--check"},
	"tar":  {"-T"},
	"zip":  {"-@"},
	"cpio": {"-o", "-p"},
}

// fileList returns why the program reads file names from a file or its
// input, or "".
func fileList(name string, args []xword) string {
	if name == "patch" {
		return "patch reads and changes the files its patch names, only known at run time"
	}
	for _, a := range args {
		if a.Kind != Literal {
			continue
		}
		for _, o := range append(fileListOpts["*"], fileListOpts[name]...) {
			if optIs(a.Value, o) {
				return name + " " + o + " reads the names of the files it opens from a list, only known at run time"
			}
		}
		if name == "git" && a.Value == "--stdin" {
			return "git --stdin reads the names of the files it opens from its input"
		}
	}
	return ""
}

// linkMaker reports a program that can create symbolic or hard links
// whose targets the command does not spell out (ln, cp -s/-l/-a, patches,
// archives, git commands that check out or apply): later commands in the
// same line could follow them.
func linkMaker(name string, args []xword) bool {
	switch name {
	case "ln", "patch", "unzip", "cpio", "rsync", "7z", "bsdtar", "pax":
		return true
	case "cp":
		for _, a := range args {
			if a.Kind == Literal && (optIs(a.Value, "-s") || optIs(a.Value, "-l") || optIs(a.Value, "-a") ||
				optIs(a.Value, "-d") || optIs(a.Value, "-P") || optIs(a.Value, "--link") ||
				optIs(a.Value, "--symbolic-link") || optIs(a.Value, "--archive") || optIs(a.Value, "--no-dereference")) {
				return true
			}
		}
	case "tar":
		for i, a := range args {
			if a.Kind == Literal && (optIs(a.Value, "-x") || optIs(a.Value, "--extract") || optIs(a.Value, "--get") ||
				i == 0 && !strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "x")) {
				return true
			}
		}
	case "git":
		for _, a := range args {
			if a.Kind != Literal || strings.HasPrefix(a.Value, "-") {
				continue
			}
			switch a.Value {
			case "apply", "am", "checkout", "switch", "restore", "reset", "merge", "pull", "rebase", "cherry-pick",
				"stash", "read-tree", "checkout-index", "update-index", "revert", "worktree", "clone", "submodule":
				return true
			}
			return false
		}
	}
	return false
}

// scriptOf returns the files a program reads as code by default: make's
// makefiles, npm's package.json.
func scriptOf(name string) []string {
	switch name {
	case "make", "gmake":
		return []string{"Makefile", "makefile", "GNUmakefile"}
	case "npm", "yarn", "pnpm", "bun":
		return []string{"package.json"}
	}
	return nil
}
