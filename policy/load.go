package policy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// LoadError reports a policy file that does not parse or does not build.
// Line is the 1-based line of the offending element when known, else 0.
type LoadError struct {
	File string
	Line int
	Err  error
}

func (e *LoadError) Error() string {
	s := e.File
	if s == "" {
		s = "policy"
	}
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// MaxPolicySize bounds the size of a policy file.
const MaxPolicySize = 1 << 20

// ErrPolicyTooLarge reports a policy file over MaxPolicySize.
var ErrPolicyTooLarge = errors.New("policy file too large")

// ErrEmptyPolicy reports a policy file with nothing in it (no bytes, or
// only white space): a file truncated or written by mistake must not pass
// for a choice. A file of comments only is a choice, and stands for the
// default (the coding preset).
var ErrEmptyPolicy = errors.New("the policy file is empty: write the settings you want (for instance mode: coding), or a comment to keep the defaults on purpose")

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// LoadSpec parses a policy file (YAML; JSON is accepted, being YAML).
// Unknown fields are errors with their line number.
func LoadSpec(r io.Reader) (*Spec, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPolicySize+1))
	if err != nil {
		return nil, &LoadError{Err: err}
	}
	if len(data) > MaxPolicySize {
		return nil, &LoadError{Err: ErrPolicyTooLarge}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &LoadError{Line: bytes.Count(data[:i], []byte("\n")) + 1, Err: ErrNUL}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &LoadError{Err: ErrEmptyPolicy}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return &s, nil // comments only: the default spec
		}
		return nil, yamlError(err)
	}
	return &s, nil
}

// yamlError turns a yaml.v3 error into a *LoadError carrying the first
// line number yaml reports.
func yamlError(err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &LoadError{Line: line, Err: errors.New(m[2])}
	}
	return &LoadError{Err: err}
}

// Load parses a policy file and builds its Policy.
func Load(r io.Reader) (*Policy, error) {
	s, err := LoadSpec(r)
	if err != nil {
		return nil, err
	}
	p, err := s.Build()
	if err != nil {
		return nil, &LoadError{Err: err}
	}
	return p, nil
}

// LoadFile reads and builds the policy file at path.
func LoadFile(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &LoadError{File: path, Err: err}
	}
	defer f.Close()
	p, err := Load(f)
	var le *LoadError
	if errors.As(err, &le) {
		le.File = path
	}
	return p, err
}
