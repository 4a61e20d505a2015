// Package sbplmodel evaluates the subset of Seatbelt profile language
// (SBPL) that cordon emits, so that the macOS profile is checked on every
// operating system: the soundness tests of policyderive parse the rendered
// profile with its -D parameters and ask, path by path, whether Seatbelt
// would permit an operation.
//
//	params, err := sbplmodel.ParseParams(defs) // the KEY=VALUE of -D
//	prof, err := sbplmodel.Parse(text, params)
//	ok, err := prof.Allows("file-write-data", "/ws/.git/hooks/pre-commit")
//
// # Subset
//
// A profile is (version 1), a default ((deny default) or (allow default);
// the last one counts), and rules (allow OP... FILTER...) / (deny OP...
// FILTER...). Operations are those of Operations, or a name followed by
// "*" covering the operations that continue it after a "-" (file-read*,
// file-write*, network*, process-info*, process-exec*...). Filters:
// (literal PATH), (subpath PATH), (prefix STRING), (regex #"RE"),
// (require-all F...), (require-any F...), (require-not F), (target
// self|children|same-sandbox|others), (remote|local ip|tcp|udp
// "*:PORT"|"localhost:PORT"); a string argument may be (param "KEY").
// Several filters in one rule match when any does; a rule without filters
// matches every request of its operations. See CompileRegex for the
// regex subset and Parse for strings.
//
// Anything else is a *ParseError wrapping ErrUnsupported: unknown forms,
// operations, filters, modifiers ((with ...)), escapes, regex features,
// paths that are not absolute and clean or that contain NUL. Nothing is
// silently ignored, so a soundness test cannot pass on a misparse.
//
// A query for a path containing NUL is a *QueryError: no system call
// takes such a path, so Seatbelt never judges one.
//
// # Evaluation
//
// For a concrete operation, the last rule in the profile whose operations
// cover it and whose filter matches decides; when none does, the default.
// This models Seatbelt's last-match-wins. Where Apple does not document
// the behaviour, the model assumes:
//   - Paths are matched bytewise, case-sensitively, as queried: the
//     caller passes the resolved path Seatbelt sees. (APFS and HFS+ are
//     case-insensitive by default; cordon's deny regexes fold case.)
//   - Regexes match bytes: "." is one byte, so a multi-byte character is
//     several; "^" and "$" anchor at the start and end of the path;
//     alternation and repetition have their POSIX meaning.
//   - A path filter never matches a request without a path, and a target
//     or address filter never matches one without a target or address.
//   - The default applies only when no rule matches, whatever its
//     position in the profile.
package sbplmodel
