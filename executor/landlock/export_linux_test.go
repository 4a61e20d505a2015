package landlock

// NoCgroups makes the executors of this process find no cgroup to use,
// as in a container: the reaper's tests run in a process of their own.
func NoCgroups() {
	cgroupBase = func() (string, string) { return "", "turned off by the test" }
}

// NoKeeper keeps this process from starting the keeper.
func NoKeeper() { noKeeper = true }

// Cgroups returns the cgroup base commands' cgroups are made under, or
// "" and why there is none.
func Cgroups() (string, string) { return cgroupBase() }

// KeeperPrefix is the name prefix of this process's command cgroups.
func KeeperPrefix() string { return keeperPrefix() }
