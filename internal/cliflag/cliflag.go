// Package cliflag is what the standard flag package lacks for loadgate's
// commands: flags after positional arguments, repeatable flags, and
// help that leads with the usage and examples.
package cliflag

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Parse parses fs's flags wherever they stand among args ("--" ends the
// flags), leaving the positional arguments, in order, as fs.Args().
func Parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // after "--": all positional
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// PrintHelp writes a command's help text as a user reads it first: its
// first paragraph (the usage) and its "Examples:" paragraphs, then fs's
// flags, then the remaining prose. A paragraph "Flags:" is dropped.
func PrintHelp(w io.Writer, text string, fs *flag.FlagSet) {
	var head, examples, prose []string
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		switch {
		case i == 0:
			head = append(head, p)
		case strings.HasPrefix(p, "Examples:"):
			examples = append(examples, p)
		case strings.TrimSpace(p) == "Flags:":
		default:
			prose = append(prose, strings.TrimSuffix(p, "\nFlags:"))
		}
	}
	fmt.Fprintln(w, strings.Join(append(head, examples...), "\n\n"))
	fmt.Fprintln(w, "\nFlags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	if len(prose) > 0 {
		fmt.Fprintln(w, "\n"+strings.Join(prose, "\n\n"))
	}
}

// Dashes is flag's parse error as the docs write flags: "--name", not "-name".
func Dashes(err error) string {
	msg := err.Error()
	for _, p := range []string{"for flag -", "not defined: -", "needs an argument: -"} {
		msg = strings.Replace(msg, p, p+"-", 1)
	}
	return msg
}

// IsSet reports whether the flag name was given on fs's command line.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Strings is a repeatable string flag: each use appends.
type Strings []string

func (m *Strings) String() string     { return strings.Join(*m, ",") }
func (m *Strings) Set(v string) error { *m = append(*m, v); return nil }

// PIDs is a repeatable process id flag: each use appends a positive id,
// never one given before.
type PIDs []int

func (p *PIDs) String() string { return fmt.Sprint([]int(*p)) }

func (p *PIDs) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a process id", v)
	}
	if slices.Contains(*p, n) {
		return fmt.Errorf("pid %d given twice", n)
	}
	*p = append(*p, n)
	return nil
}
