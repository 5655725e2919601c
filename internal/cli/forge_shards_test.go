package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The outputs added with the shards and the size bounds: a case, a baseline
// case or a run's refused query named at its shard and its line there (the
// shard's file name is data: a directory's files are named by whoever wrote
// them) in the terminal report, the annotations, the job summary and the
// Markdown, JUnit and Code Quality reports (with long hostile ids, cut), and
// the located errors of a bad shard and of the judge's pool (`shard:line: run
// "NAME": msg`, the run's name and the message both data). Inside Actions and
// outside, no line of any stream, the job summary, the outputs file or a
// Markdown report is a forged command, and no secret reaches any of them or a
// file written. (JUnit and Code Quality are never written to standard output:
// only import's --out is.)
func TestNoForgedCommandShardOutputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kbF := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n"+`{"id":"b","text":"beta"}`+"\n")

	// Shards whose file names carry a command in every syntax: each holds a
	// case whose gold is no card (an integrity problem at the shard's line),
	// one found and one missed.
	var caseShards, baseShards, runShards []string
	for i, p := range forgePayloads {
		name := fmt.Sprintf("s%d %s.jsonl", i, p)
		c := fmt.Sprintf(`{"id":%s,"locale":"en","type":"golden","query":%s,"must_cite_one_of":["a"],"retrieved":["a"]}`+"\n", js(fmt.Sprintf("c%d %s", i, p)), js(p)) +
			fmt.Sprintf(`{"id":%s,"locale":"en","type":"golden","query":%s,"must_cite_one_of":[%s],"retrieved":["b"]}`+"\n", js(fmt.Sprintf("g%d %s", i, p)), js(p), js(p))
		caseShards = append(caseShards, write(filepath.Join("cases", name), c))
		// The baseline: cases only in it, at a hostile shard's second line.
		b := fmt.Sprintf(`{"id":%s,"locale":"en","type":"golden","query":"q","must_cite_one_of":["a"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":1,"retrieval_recall_at_k":1}}`+"\n", js(fmt.Sprintf("c%d %s", i, p))) +
			fmt.Sprintf(`{"id":%s,"locale":"en","type":"golden","query":"q","must_cite_one_of":["a"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":1,"retrieval_recall_at_k":1}}`+"\n", js(fmt.Sprintf("only%d %s", i, p)))
		baseShards = append(baseShards, write(filepath.Join("base", name), b))
		// A run's shards, the last retrieving a document that is no card.
		doc := `"a"`
		if i == len(forgePayloads)-1 {
			doc = js("zz " + p)
		}
		runShards = append(runShards, write(filepath.Join("run", name), fmt.Sprintf(`{"id":%s,"query":%s,"retrieved":[%s]}`+"\n", js(fmt.Sprintf("q%d %s", i, p)), js("alpha "+p), doc)))
	}
	// A case id and a gold id longer than the JUnit and Code Quality reports
	// keep (256 bytes): the cut falls inside the command they carry.
	long := strings.Repeat("x", 250) + " ##[error title=FORGED]x"
	caseShards = append(caseShards, write(filepath.Join("cases", "long "+forgePayloads[1]+".jsonl"),
		fmt.Sprintf(`{"id":%s,"locale":"en","type":"golden","query":"q","must_cite_one_of":[%s],"retrieved":["a"]}`+"\n", js(long), js(long))))
	require.Len(t, caseShards, len(baseShards)+1)
	require.Len(t, runShards, len(forgePayloads))
	badShard := write(filepath.Join("bad", "x "+forgePayloads[0]+".jsonl"), `{"id":"ok","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n"+`{"id":`+js(forgePayloads[5])+`,"retrieved":`+"\n")
	casesDir, baseDir, runDir, badDir := filepath.Join(dir, "cases"), filepath.Join(dir, "base"), filepath.Join(dir, "run"), filepath.Dir(badShard)

	t.Run("check of shards: JUnit, Code Quality, Markdown", func(t *testing.T) {
		forgeRun(t, dir, 1, "check", "--cases", casesDir, "--kb", kbF, "--comment", "never", "--verbose",
			"--junit", filepath.Join(dir, "j.xml"), "--codequality", filepath.Join(dir, "cq.json"), "--markdown", filepath.Join(dir, "m.md"))
		forgeRunData(t, dir, 2, false, "check", "--cases", casesDir, "--kb", kbF, "--comment", "never", "--junit", "-") // refused
	})
	t.Run("check with a sharded baseline", func(t *testing.T) {
		forgeRun(t, dir, -1, "check", "--cases", casesDir, "--kb", kbF, "--comment", "never", "--verbose", "--baseline", baseDir,
			"--markdown", filepath.Join(dir, "mb.md"), "--json", filepath.Join(dir, "b.json"), "--html", filepath.Join(dir, "b.html"))
		forgeRun(t, dir, -1, "check", "--cases", filepath.Join(casesDir, "*.jsonl"), "--kb", kbF, "--comment", "never", "--verbose",
			"--baseline", filepath.Join(baseDir, "*.jsonl"))
		// The cases only in the baseline are named at their hostile shard
		// (the Markdown lists their ids).
		data, err := os.ReadFile(filepath.Join(dir, "b.json"))
		require.NoError(t, err)
		require.Regexp(t, `"case_id": "only1 en ##\[error title=FORGED\]x",\s+"file": "[^"]*/base/s1 en ##\[error title=FORGED\]x.jsonl",\s+"line": 2`, string(data))
	})
	t.Run("a bad shard's located error", func(t *testing.T) {
		forgeRun(t, dir, 2, "check", "--cases", badDir, "--kb", kbF, "--comment", "never")
	})
	t.Run("judge's located pool error", func(t *testing.T) {
		llm := httptest.NewServer(http.NotFoundHandler())
		defer llm.Close()
		forgeRun(t, dir, 2, "judge", "--kb", kbF, "--run", forgePayloads[0]+" "+forgePayloads[5]+"="+runDir, "--k", "2",
			"--judge-url", llm.URL, "--judge-model", "fake", "--cache", "none", "--qrels", filepath.Join(dir, "pool.qrels"))
	})
}
