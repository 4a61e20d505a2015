package sbplmodel

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrQuery is wrapped by *QueryError.
var ErrQuery = errors.New("invalid SBPL query")

// QueryError reports a query the model cannot answer: an unknown or
// wildcard operation, a relative path, a path containing NUL (which no
// system call accepts, so Seatbelt never judges one).
type QueryError struct {
	Query   Query
	Problem string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("%v: %+v: %s", ErrQuery, e.Query, e.Problem)
}

// Unwrap returns ErrQuery.
func (e *QueryError) Unwrap() error { return ErrQuery }

// Query is one operation to judge.
type Query struct {
	// Op is a concrete operation of Operations ("file-read-data", not
	// "file-read*").
	Op string
	// Path is the absolute path a file operation (or a Unix-socket
	// network operation) acts on, as Seatbelt sees it: resolved, no
	// symlinks. Matching is bytewise and case-sensitive. It may hold any
	// byte but NUL. Empty for operations without a path; then no path
	// filter matches.
	Path string
	// Target is the relation of a signal's or process-info's target:
	// "self", "children", "same-sandbox" (another process of the same
	// sandbox) or "others".
	Target string
	// Remote and Local are the "host:port" addresses of a network
	// operation (host an IP address or "localhost"); Proto is "tcp" or
	// "udp".
	Remote, Local, Proto string
}

// Verdict is the outcome of a query.
type Verdict struct {
	Action Action
	// Rule is the last matching rule, or nil when the default decided.
	Rule *Rule
}

// Eval judges q: the last rule (in profile order) whose operations cover
// q.Op and whose filter matches decides; when none does, the default.
func (p *Profile) Eval(q Query) (Verdict, error) {
	if !isOperation(q.Op) {
		return Verdict{}, &QueryError{Query: q, Problem: "not a concrete operation"}
	}
	switch {
	case q.Path == "":
	case q.Path[0] != '/':
		return Verdict{}, &QueryError{Query: q, Problem: "path is not absolute"}
	case strings.IndexByte(q.Path, 0) >= 0:
		// No system call takes such a path: Seatbelt is never asked.
		return Verdict{}, &QueryError{Query: q, Problem: "path contains NUL"}
	}
	for i := len(p.Rules) - 1; i >= 0; i-- {
		r := p.Rules[i]
		if r.covers(q.Op) && (r.Filter == nil || r.Filter.Match(&q)) {
			return Verdict{Action: r.Action, Rule: r}, nil
		}
	}
	return Verdict{Action: p.Default}, nil
}

// Allows reports whether the profile allows op on path.
func (p *Profile) Allows(op, path string) (bool, error) {
	v, err := p.Eval(Query{Op: op, Path: path})
	return v.Action == Allow, err
}

func (r *Rule) covers(op string) bool {
	for _, o := range r.ops {
		if o.covers(op) {
			return true
		}
	}
	return false
}

// Match reports whether the filter matches q.
func (f *Filter) Match(q *Query) bool {
	switch f.Kind {
	case FilterLiteral:
		return q.Path != "" && q.Path == f.Arg
	case FilterSubpath:
		return q.Path != "" && (q.Path == f.Arg || strings.HasPrefix(q.Path, strings.TrimSuffix(f.Arg, "/")+"/"))
	case FilterPrefix:
		return q.Path != "" && strings.HasPrefix(q.Path, f.Arg)
	case FilterRegex:
		return q.Path != "" && f.Regex.Match(q.Path)
	case FilterAll:
		for _, s := range f.Sub {
			if !s.Match(q) {
				return false
			}
		}
		return true
	case FilterAny:
		for _, s := range f.Sub {
			if s.Match(q) {
				return true
			}
		}
		return false
	case FilterNot:
		return !f.Sub[0].Match(q)
	case FilterTarget:
		switch f.Arg {
		case "same-sandbox":
			return q.Target == "self" || q.Target == "children" || q.Target == "same-sandbox"
		default:
			return q.Target != "" && q.Target == f.Arg
		}
	case FilterRemote:
		return f.matchAddr(q.Remote, q.Proto)
	case FilterLocal:
		return f.matchAddr(q.Local, q.Proto)
	}
	return false
}

func (f *Filter) matchAddr(addr, proto string) bool {
	if addr == "" || (f.Proto != "ip" && f.Proto != proto) {
		return false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	fhost, fport, _ := strings.Cut(f.Arg, ":")
	if fport != "*" && fport != port {
		return false
	}
	if fhost == "*" {
		return true
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
