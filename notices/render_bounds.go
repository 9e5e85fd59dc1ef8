package notices

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strconv"
	texttemplate "text/template"
	"text/template/parse"
	"time"
)

// renderLimits bound the rendering of one message (its sections and digest,
// subject and bodies) from an administrator's templates. A notice lists one
// patron's items, a few hundred at most: these are far above what a template
// that does that needs, and far below what stalls the server.
var renderLimits = struct {
	// Steps is the number of loop turns and template calls.
	Steps int
	// Bytes is the output of one part (subject, plain text, HTML), and the
	// largest string printf and the escaping functions may build.
	Bytes int
	// Time is the wall time of the whole message.
	Time time.Duration
	// Width is the largest width or precision printf accepts.
	Width int
}{Steps: 100_000, Bytes: 1 << 20, Time: 2 * time.Second, Width: 1_000}

// boundError is a template that went past renderLimits; its message completes
// "The plain-text body ..." for the template editor.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

func errTooManySteps() error {
	return &boundError{fmt.Sprintf("loops or calls templates more than %s times: a notice lists one patron's items, a few hundred at most; look for a range over a large number, nested ranges, or a template that calls itself.", thousands(renderLimits.Steps))}
}

func errTooLong() error {
	return &boundError{fmt.Sprintf("writes more than %d KB: a notice is a few pages at most; look for a range over a large number, or a printf or variable that keeps growing.", renderLimits.Bytes>>10)}
}

func errTooSlow() error {
	return &boundError{fmt.Sprintf("takes more than %s to render: look for a range over a large number, nested ranges, or a printf or variable that keeps growing.", renderLimits.Time)}
}

// budget is what one message may still spend. The step function that
// guardTemplate puts at the top of every loop body and template, and every
// write, spend from it; the first to find it spent stops the template with a
// boundError. text/template cannot be interrupted from outside, but it stops
// at the first function or writer that returns an error, and no loop or call
// can run without passing one.
type budget struct {
	steps    int
	deadline time.Time
}

func newBudget() *budget {
	return &budget{steps: renderLimits.Steps, deadline: time.Now().Add(renderLimits.Time)}
}

func (b *budget) step() error {
	b.steps--
	if b.steps < 0 {
		return errTooManySteps()
	}
	return b.inTime()
}

func (b *budget) inTime() error {
	if time.Now().After(b.deadline) {
		return errTooSlow()
	}
	return nil
}

// boundedWriter holds one part's output, up to renderLimits.Bytes and within
// the message's time.
type boundedWriter struct {
	buf bytes.Buffer
	b   *budget
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > renderLimits.Bytes {
		return 0, errTooLong()
	}
	if err := w.b.inTime(); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

func (w *boundedWriter) String() string { return w.buf.String() }

// stepFunc is the name of the function guardTemplate calls.
const stepFunc = "renderStep"

// boundedFuncs are the functions of a template parsed into p: the step, and in
// place of the built-in printf, print, println, html, js and urlquery, the
// same functions refusing to build a string past the bounds (a printf with a
// width of 100,000,000 builds the whole string before anything is written).
func boundedFuncs(p *parsed) map[string]any {
	size := func(args []any) error {
		n := 0
		for _, a := range args {
			switch s := a.(type) {
			case string:
				n += len(s)
			case []byte:
				n += len(s)
			case htmltemplate.HTML:
				n += len(s)
			}
		}
		if n > renderLimits.Bytes {
			return errTooLong()
		}
		return nil
	}
	escaper := func(f func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			if err := size(args); err != nil {
				return "", err
			}
			s := f(args...)
			if len(s) > renderLimits.Bytes {
				return "", errTooLong()
			}
			return s, nil
		}
	}
	return map[string]any{
		stepFunc: func() (string, error) { return "", p.b.step() },
		"printf": func(format string, args ...any) (string, error) {
			if err := printfWidths(format); err != nil {
				return "", err
			}
			if err := size(append(args, format)); err != nil {
				return "", err
			}
			return fmt.Sprintf(format, args...), nil
		},
		"print":    escaper(fmt.Sprint),
		"println":  escaper(fmt.Sprintln),
		"html":     escaper(texttemplate.HTMLEscaper),
		"js":       escaper(texttemplate.JSEscaper),
		"urlquery": escaper(texttemplate.URLQueryEscaper),
	}
}

// printfWidths refuses a format with a width or precision over
// renderLimits.Width, or one given as an argument (*).
func printfWidths(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '*' {
				return &boundError{"uses printf with a width or precision given as an argument (*): write the number in the format."}
			}
			if c >= '0' && c <= '9' {
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if n, err := strconv.Atoi(format[i:j]); err != nil || n > renderLimits.Width {
					return &boundError{fmt.Sprintf("uses printf with a width or precision over %s.", thousands(renderLimits.Width))}
				}
				i = j - 1
				continue
			}
			if !bytes.ContainsRune([]byte("+-# .[]"), rune(c)) {
				break
			}
		}
	}
	return nil
}

// guardTemplate puts a call of the step function at the top of each
// template's body and of every range's body, as {{$renderStep := renderStep}}:
// an assignment, so that it writes nothing in any context (html/template
// escapes what an action prints, and would print "" in a script).
func guardTemplate(trees []*parse.Tree) {
	for _, tree := range trees {
		if tree != nil && tree.Root != nil {
			guardList(tree, tree.Root, true)
		}
	}
}

func guardList(tree *parse.Tree, l *parse.ListNode, step bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.IfNode:
			guardList(tree, n.List, false)
			guardList(tree, n.ElseList, false)
		case *parse.WithNode:
			guardList(tree, n.List, false)
			guardList(tree, n.ElseList, false)
		case *parse.RangeNode:
			guardList(tree, n.List, true)
			guardList(tree, n.ElseList, false)
		}
	}
	if step {
		l.Nodes = append([]parse.Node{stepNode(tree, l.Pos)}, l.Nodes...)
	}
}

func stepNode(tree *parse.Tree, pos parse.Pos) parse.Node {
	call := parse.NewIdentifier(stepFunc).SetTree(tree).SetPos(pos)
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{
		NodeType: parse.NodePipe, Pos: pos,
		Decl: []*parse.VariableNode{{NodeType: parse.NodeVariable, Pos: pos, Ident: []string{"$" + stepFunc}}},
		Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{call}}},
	}}
}

func textTrees(t *texttemplate.Template) []*parse.Tree {
	var out []*parse.Tree
	for _, x := range t.Templates() {
		out = append(out, x.Tree)
	}
	return out
}

func htmlTrees(t *htmltemplate.Template) []*parse.Tree {
	var out []*parse.Tree
	for _, x := range t.Templates() {
		out = append(out, x.Tree)
	}
	return out
}

// renderLimit returns the boundError in err, if any.
func renderLimit(err error) (*boundError, bool) {
	var b *boundError
	return b, errors.As(err, &b)
}

// thousands writes n with commas: 100,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
