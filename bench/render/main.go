// Command render turns a Markdown report (a gate/report or gate/action golden) into
// a standalone HTML page as GitHub shows a pull request comment, for `make screenshots`:
// `go run ./bench/render [-open] in.md out.html` (-open expands every <details>).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
body { margin: 0; background: #fff; color: #1f2328; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Noto Color Emoji"; }
.comment { width: 914px; margin: 16px auto; border: 1px solid #d1d9e0; border-radius: 6px; }
.comment > header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; border-radius: 6px 6px 0 0; }
.body { padding: 16px; overflow-wrap: break-word; }
h1 { font-size: 2em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: .2em 0 16px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: 24px 0 16px; }
p, ul, table, pre, details { margin: 0 0 16px; }
table { border-collapse: collapse; display: block; overflow: auto; max-width: 100%%; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; } tr:nth-child(2n) { background: #f6f8fa; }
code { background: rgba(129,139,152,.12); border-radius: 6px; padding: .2em .4em; font: 85%% ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; border-radius: 6px; padding: 16px; overflow: auto; } pre code { background: none; padding: 0; }
summary { cursor: pointer; } a { color: #0969da; text-decoration: none; }
blockquote { margin: 0 0 16px; padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
</style></head>
<body><div class="comment"><header><b>github-actions</b> commented</header><div class="body">
%s
</div></div></body></html>
`

func main() {
	open := flag.Bool("open", false, "expand every <details> section")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: render [-open] in.md out.html") }
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	src, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	var body bytes.Buffer
	if err := md.Convert(src, &body); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	out := drawCharts(body.String())
	if *open {
		out = strings.ReplaceAll(out, "<details>", "<details open>")
	}
	doc := fmt.Sprintf(page, html.EscapeString(filepath.Base(flag.Arg(0))), out)
	if err := os.WriteFile(flag.Arg(1), []byte(doc), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}
