package browsertest

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
)

// CommentColumn is the width (CSS px) of the column a GitHub PR comment is read
// in on a desktop window; the comment page is checked at this viewport width.
const CommentColumn = 850

// gfm renders GitHub Flavored Markdown. Raw HTML is kept, as GitHub keeps the
// reports' <details>, <summary>, <br> and comments (the page's CSP forbids every
// script and request anyway).
var gfm = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(ghtml.WithUnsafe()),
)

var (
	mermaidBlock = regexp.MustCompile(`(?s)<pre><code class="language-mermaid">.*?</code></pre>`)
	// alert is GitHub's "> [!NOTE]" family of blockquotes.
	alert = regexp.MustCompile(`<blockquote>\n<p>\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\n?`)
)

// GitHubComment renders a Markdown report as GitHub shows it in a PR comment: a
// self-contained page holding one comment box whose CSS follows GitHub's
// comment styles (system fonts at 14 px, tables as scrollable blocks with 6×13 px
// cell padding, inline code at 85 %). Mermaid blocks, which GitHub draws itself
// at the column's width, become a placeholder box that is not measured.
func GitHubComment(title string, md []byte) ([]byte, error) {
	var body bytes.Buffer
	if err := gfm.Convert(md, &body); err != nil {
		return nil, err
	}
	out := mermaidBlock.ReplaceAll(body.Bytes(), []byte(`<div class="mermaid">Mermaid chart (GitHub draws it at the column's width)</div>`))
	out = alert.ReplaceAllFunc(out, func(m []byte) []byte {
		kind := string(alert.FindSubmatch(m)[1])
		return []byte(`<blockquote class="alert ` + strings.ToLower(kind) + `"><p class="alert-title">` + kind[:1] + strings.ToLower(kind[1:]) + "</p>\n<p>")
	})
	var page bytes.Buffer
	page.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	page.WriteString(html.EscapeString(title))
	page.WriteString(`</title><style>` + commentCSS + `</style></head>
<body><div class="comment"><div class="header">github-actions commented</div><div class="markdown-body">
`)
	page.Write(out)
	page.WriteString("</div></div></body></html>\n")
	return page.Bytes(), nil
}

// commentCSS approximates GitHub's .markdown-body inside a timeline comment.
const commentCSS = `
*{box-sizing:border-box}
html{background:#fff}
body{margin:0;padding:0;color:#1f2328;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;font-size:14px;line-height:1.5;word-wrap:break-word}
.comment{max-width:850px;border:1px solid #d0d7de;border-radius:6px}
.header{padding:8px 16px;background:#f6f8fa;border-bottom:1px solid #d0d7de;color:#59636e}
.markdown-body{padding:16px}
.markdown-body>*:first-child{margin-top:0}
.markdown-body>*:last-child{margin-bottom:0}
h1,h2,h3,h4{margin-top:24px;margin-bottom:16px;font-weight:600;line-height:1.25}
h1{font-size:2em;padding-bottom:.3em;border-bottom:1px solid #d1d9e0b3}
h2{font-size:1.5em;padding-bottom:.3em;border-bottom:1px solid #d1d9e0b3}
h3{font-size:1.25em}
h4{font-size:1em}
p,blockquote,ul,ol,dl,table,pre,details{margin-top:0;margin-bottom:16px}
ul,ol{padding-left:2em}
blockquote{margin-left:0;padding:0 1em;color:#59636e;border-left:.25em solid #d0d7de}
code,pre,tt{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:85%}
code{padding:.2em .4em;margin:0;white-space:break-spaces;background:#818b981f;border-radius:6px}
pre{padding:16px;overflow:auto;line-height:1.45;background:#f6f8fa;border-radius:6px}
pre code{padding:0;background:transparent;white-space:pre;font-size:100%}
table{display:block;width:max-content;max-width:100%;overflow:auto;border-spacing:0;border-collapse:collapse;font-variant:tabular-nums}
table th{font-weight:600}
table th,table td{padding:6px 13px;border:1px solid #d1d9e0}
table tr{background:#fff;border-top:1px solid #d1d9e0b3}
table tr:nth-child(2n){background:#f6f8fa}
details summary{cursor:pointer;display:list-item}
hr{height:.25em;padding:0;margin:24px 0;background:#d1d9e0;border:0}
.alert{color:inherit}.alert-title{font-weight:500;margin-bottom:4px}
.alert.note{border-left-color:#0969da}.alert.note .alert-title{color:#0969da}
.alert.tip{border-left-color:#1a7f37}.alert.tip .alert-title{color:#1a7f37}
.alert.important{border-left-color:#8250df}.alert.important .alert-title{color:#8250df}
.alert.warning{border-left-color:#9a6700}.alert.warning .alert-title{color:#9a6700}
.alert.caution{border-left-color:#d1242f}.alert.caution .alert-title{color:#d1242f}
.mermaid{padding:16px;margin-bottom:16px;border:1px dashed #d0d7de;border-radius:6px;color:#59636e}
`
