package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// audit looks at the whole parsed command for constructs whose meaning the
// walk cannot know, and records each as a dynamic segment (never allowed):
//   - arithmetic on a variable ($((x)), $[x], ((x)), let, for ((...)),
//     subscripts, declare -i): bash evaluates a variable's value as an
//     expression, and a subscript in it runs command substitutions
//     (x='a[$(rm -rf ~)]'; echo $((x)));
//   - a quoted string inside ${x:-...} in double quotes or a here-document:
//     shells disagree on whether its quotes are quotes, and
//     "${x:-'$(cmd)'}" runs cmd in all of them;
//   - a here-document whose body joins lines with a backslash: shells
//     disagree on where it ends;
//   - brace expansion around "~" ({~,x}/.ssh): bash expands the tilde
//     after the braces;
//   - subscripts with substitutions in the names builtins take (test -v,
//     printf -v, read, unset, declare 'a[$(cmd)]');
//   - namerefs (declare -n), printf -v and read into variables that change
//     how later words resolve (HOME, PWD, CDPATH, PS4, ...), and alias
//     definitions, which change how later lines are read.
func (w *walker) audit(c ctx, f *syntax.File) {
	if w.quiet > 0 {
		return
	}
	flag := func(n syntax.Node, reason string) {
		text := c.text(n)
		if text == "" {
			text = c.src
		}
		w.dynamic(c, text, reason)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ArithmExp:
			if arithVar(n.X) {
				flag(n, "arithmetic on a variable: bash evaluates its value as an expression, which can run commands")
			}
		case *syntax.ArithmCmd:
			if arithVar(n.X) {
				flag(n, "arithmetic on a variable: bash evaluates its value as an expression, which can run commands")
			}
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				if arithVar(x) {
					flag(n, "let on a variable: bash evaluates its value as an expression, which can run commands")
					break
				}
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				if x != nil && arithVar(x) {
					flag(n, "arithmetic on a variable: bash evaluates its value as an expression, which can run commands")
					break
				}
			}
		case *syntax.ParamExp:
			if n.Index != nil && arithVar(n.Index) || n.Slice != nil && (n.Slice.Offset != nil && arithVar(n.Slice.Offset) ||
				n.Slice.Length != nil && arithVar(n.Slice.Length)) {
				flag(n, "a subscript or offset on a variable: bash evaluates its value as an expression")
			}
			if n.Exp != nil && n.Exp.Word != nil {
				for _, p := range n.Exp.Word.Parts {
					if sq, ok := p.(*syntax.SglQuoted); ok && strings.ContainsAny(sq.Value, "$`") {
						flag(n, "a quoted string inside ${...}: shells disagree on whether its quotes are quotes, and a substitution in it may run")
					}
				}
			}
		case *syntax.Assign:
			if n.Index != nil && arithVar(n.Index) {
				flag(n, "a subscript on a variable: bash evaluates its value as an expression")
			}
		case *syntax.Redirect:
			if n.Hdoc != nil && strings.Contains(c.text(n.Hdoc), "\\\n") {
				flag(n, "a here-document that joins lines with a backslash: shells disagree on where it ends")
			}
		case *syntax.Word:
			if t := c.text(n); strings.Contains(t, "{") && strings.Contains(t, "~") && (strings.Contains(t, ",") || strings.Contains(t, "..")) {
				flag(n, "brace expansion around ~: bash expands the tilde after the braces")
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				if a.Naked && a.Value != nil {
					if v := a.Value.Lit(); strings.HasPrefix(v, "-") && strings.ContainsAny(v, "in") {
						flag(n, "declare "+v+": integer variables and namerefs evaluate or redirect later assignments")
					}
				}
				if a.Name != nil && unsafeName(a.Name.Value) {
					flag(n, "declaring "+a.Name.Value+" changes how later words resolve")
				}
				if a.Value != nil {
					if v := c.text(a.Value); strings.Contains(v, "[") && strings.ContainsAny(v, "$`") {
						flag(n, "a subscript with a substitution in a name")
					}
				}
			}
		case *syntax.CallExpr:
			w.auditCall(c, n, flag)
		}
		return true
	})
}

// auditCall checks the builtins that take variable names.
func (w *walker) auditCall(c ctx, ce *syntax.CallExpr, flag func(syntax.Node, string)) {
	if len(ce.Args) == 0 {
		return
	}
	name := ce.Args[0].Lit()
	switch name {
	case "test", "[", "printf", "read", "unset", "getopts", "mapfile", "readarray", "wait", "export", "readonly",
		"local", "declare", "typeset", "let", "eval", "[[", "source", ".":
	case "alias":
		for _, a := range ce.Args[1:] {
			if strings.Contains(c.text(a), "=") {
				flag(ce, "alias definitions change how later lines are read")
				return
			}
		}
		return
	default:
		return
	}
	for i, a := range ce.Args[1:] {
		t := c.text(a)
		if strings.Contains(t, "[") && strings.ContainsAny(t, "$`") && name != "eval" && name != "[[" {
			flag(ce, name+": a subscript with a substitution in a name runs it")
			return
		}
		v := a.Lit()
		switch {
		case name == "printf" && strings.HasPrefix(v, "-v"):
			target := strings.TrimPrefix(v, "-v")
			if target == "" && i+2 < len(ce.Args) {
				target = ce.Args[i+2].Lit()
			}
			if target == "" || unsafeName(strings.SplitN(target, "[", 2)[0]) {
				flag(ce, "printf -v "+target+" sets a variable that changes how later words resolve")
				return
			}
		case (name == "read" || name == "getopts" || name == "mapfile" || name == "readarray") && unsafeName(v):
			flag(ce, name+" sets "+v+", which changes how later words resolve")
			return
		case (name == "local" || name == "export" || name == "readonly" || name == "declare" || name == "typeset") &&
			strings.HasPrefix(v, "-") && strings.ContainsAny(v, "n"):
			flag(ce, name+" "+v+": namerefs redirect later assignments")
			return
		}
	}
}

// unsafeName reports variables whose value changes how the gate resolves
// later words or what runs.
func unsafeName(name string) bool {
	switch name {
	case "HOME", "PWD", "OLDPWD", "CDPATH", "IFS", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "HISTFILE":
		return true
	}
	_, ok := envVars[name]
	return ok || opaqueVar(name) != ""
}

// arithVar reports an arithmetic expression that references a variable
// (a name or a parameter expansion) rather than only numbers.
func arithVar(x syntax.Node) bool {
	found := false
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst:
			found = true
		case *syntax.Word:
			if lit := n.Lit(); lit != "" && isName(lit) {
				found = true
			}
		}
		return !found
	})
	return found
}
