// Package backendtest holds the checks every sandbox backend's tests run
// against its executor: the malformed-request table with its allowed twin
// (CheckRequestErrors), no policy compiled per command for a request that
// carries its compiled policy (CheckCompiledOnce), and the network
// allow-list (CheckAllowList, BenchAllowList). It lives under executor/
// because it imports executor and policyderive; internal/testenv, which
// every package's tests use, imports neither.
package backendtest
