package policy

// CommandVerdict is the judgement of a whole command.
type CommandVerdict struct {
	Decision Decision `json:"decision"`
	// Rule and Reason come from the strictest element.
	Rule     string           `json:"rule"`
	Reason   string           `json:"reason"`
	Segments []SegmentVerdict `json:"segments"`
	Claims   []ClaimVerdict   `json:"claims"`
}

// SegmentVerdict is the command-rule verdict of one simple command.
type SegmentVerdict struct {
	// Text is the segment as it appears in the command.
	Text string `json:"text"`
	// Words are the literal words after quote removal, assignments skipped
	// and wrappers unwrapped; empty when not literal.
	Words    []string `json:"words"`
	Decision Decision `json:"decision"`
	Rule     string   `json:"rule"`
	Reason   string   `json:"reason"`
}

// ClaimVerdict is the path verdict of one path claim.
type ClaimVerdict struct {
	// Arg is the word as written in the command.
	Arg string `json:"arg"`
	// Source says where the claim came from: "redirect", "argument",
	// "writer argument", "cwd".
	Source  string   `json:"source"`
	Verdict *Verdict `json:"verdict"`
}
