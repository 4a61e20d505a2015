package policy

import "fmt"

// Decision is the outcome of judging an operation: Allow, Ask or Deny.
//
// The zero value is Deny, so a zero Policy forbids everything. Decisions are
// ordered by strictness, Deny > Ask > Allow; combining decisions keeps the
// strictest (see Strictest).
type Decision uint8

const (
	// Deny forbids the operation.
	Deny Decision = iota
	// Ask requires the user's approval. At the OS level an ask is a deny
	// unless the user approved it for one command (see Grant).
	Ask
	// Allow permits the operation.
	Allow
)

// String returns "allow", "ask" or "deny".
func (d Decision) String() string {
	switch d {
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	case Allow:
		return "allow"
	}
	return fmt.Sprintf("Decision(%d)", uint8(d))
}

// Valid reports whether d is one of Allow, Ask and Deny.
func (d Decision) Valid() bool { return d <= Allow }

// MarshalText implements encoding.TextMarshaler.
func (d Decision) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("invalid decision %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler. It accepts exactly
// "allow", "ask" and "deny" and rejects anything else by name:
// invalid decision "maybe".
func (d *Decision) UnmarshalText(b []byte) error {
	switch string(b) {
	case "allow":
		*d = Allow
	case "ask":
		*d = Ask
	case "deny":
		*d = Deny
	default:
		return &TextError{Kind: "decision", Value: string(b), Valid: []string{"allow", "ask", "deny"}}
	}
	return nil
}

// Stricter reports whether d is stricter than e.
func (d Decision) Stricter(e Decision) bool { return d < e }

// Strictest returns the strictest of the given decisions, or Allow when
// there are none.
func Strictest(ds ...Decision) Decision {
	out := Allow
	for _, d := range ds {
		if d < out {
			out = d
		}
	}
	return out
}

// Op is a file operation that a path decision is about.
type Op uint8

const (
	// Read covers reading, listing and executing.
	Read Op = iota + 1
	// Write covers creating, modifying, renaming and deleting.
	Write
)

// String returns "read" or "write".
func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Valid reports whether o is Read or Write.
func (o Op) Valid() bool { return o == Read || o == Write }

// MarshalText implements encoding.TextMarshaler.
func (o Op) MarshalText() ([]byte, error) {
	if !o.Valid() {
		return nil, fmt.Errorf("invalid op %d", uint8(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting "read" and
// "write": invalid op "exec".
func (o *Op) UnmarshalText(b []byte) error {
	switch string(b) {
	case "read":
		*o = Read
	case "write":
		*o = Write
	default:
		return &TextError{Kind: "op", Value: string(b), Valid: []string{"read", "write"}}
	}
	return nil
}

// Network says what network access commands get at the OS level.
type Network uint8

const (
	// NetworkNone forbids every network connection, the host's loopback
	// included. A sandbox may give commands a private loopback of their
	// own (a network namespace with nothing but lo), so a test server a
	// command starts on 127.0.0.1 works; nothing outside it is reachable.
	// It is the zero value.
	NetworkNone Network = iota
	// NetworkFull shares the host's network.
	NetworkFull
	// NetworkAllowList lets commands reach only the hosts Policy.Hosts
	// allows, through a proxy that decides every connection; nothing else
	// is reachable, loopback included.
	NetworkAllowList
)

// String returns "none", "full" or "allowlist".
func (n Network) String() string {
	switch n {
	case NetworkNone:
		return "none"
	case NetworkFull:
		return "full"
	case NetworkAllowList:
		return "allowlist"
	}
	return fmt.Sprintf("Network(%d)", uint8(n))
}

// MarshalText implements encoding.TextMarshaler.
func (n Network) MarshalText() ([]byte, error) {
	if n > NetworkAllowList {
		return nil, fmt.Errorf("invalid network %d", uint8(n))
	}
	return []byte(n.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting "none",
// "full" and "allowlist" (an allow-list with no entries: every host is
// decided by network.unknown): invalid network "proxy".
func (n *Network) UnmarshalText(b []byte) error {
	switch string(b) {
	case "none":
		*n = NetworkNone
	case "full":
		*n = NetworkFull
	case "allowlist":
		*n = NetworkAllowList
	default:
		return &TextError{Kind: "network", Value: string(b), Valid: []string{"none", "full", "allowlist"}}
	}
	return nil
}
