package landlock

// KeepsNamespaces reports whether commands join a kept mount namespace
// (the cgo start path).
const KeepsNamespaces = canSpawn
