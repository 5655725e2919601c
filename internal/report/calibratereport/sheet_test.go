package calibratereport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
)

// A labelling sheet and the judge's qrels declare no construct (docs/calibrate.md,
// "One sheet for both": the labels are read as the lock's dimension relevance):
// the report said "Human labels declare relevance-4-point; judge scores declare
// relevance-4-point", a construct check that never happened. It now says that
// neither side declares one, and the JSON's constructs lists are empty with
// "assigned": true; a label file's constructs read as before.
func TestSheetConstructsNotDeclared(t *testing.T) {
	lock, err := labelfile.ReadLock([]byte(`{"dimensions": {"relevance": {"construct": "relevance-4-point", "gated": true}},
 "bins": [0.17, 0.5, 0.84], "kappa_weighting": "quadratic", "min_kappa": 0.6, "min_n": 1}`), "lock.json")
	require.NoError(t, err)
	sheet := "{\"query_id\":\"q1\",\"doc_id\":\"a\",\"grade\":2}\n{\"query_id\":\"q1\",\"doc_id\":\"b\",\"grade\":0}\n{\"query_id\":\"q2\",\"doc_id\":\"a\",\"grade\":3}\n"
	qrels := "q1 0 a 2\nq1 0 b 1\nq2 0 a 3\n"
	res, err := calibrate.Run(context.Background(), calibrate.In{Lock: lock,
		HumanSheet: calibrate.Reader{Name: "sheet.jsonl", R: strings.NewReader(sheet)},
		JudgeQrels: calibrate.Reader{Name: "judged.qrels", R: strings.NewReader(qrels)}}, calibrate.Options{})
	require.NoError(t, err)
	doc := calibratereport.New(res)

	var md bytes.Buffer
	require.NoError(t, doc.Markdown(&md, "calibrate"))
	assert.Contains(t, md.String(), "Construct (lock): relevance-4-point. The labelling sheet and the judge's qrels declare no construct: both are read as the lock's, so the construct guard has nothing to check.")
	assert.NotContains(t, md.String(), "Human labels declare")

	var js bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	var got struct {
		Dimensions map[string]struct {
			N          int `json:"n"`
			Constructs struct {
				Assigned *bool    `json:"assigned"`
				Human    []string `json:"human"`
				Judge    []string `json:"judge"`
				Lock     string   `json:"lock"`
			} `json:"constructs"`
		} `json:"dimensions"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	c := got.Dimensions["relevance"].Constructs
	assert.Equal(t, 3, got.Dimensions["relevance"].N)
	require.NotNil(t, c.Assigned)
	assert.True(t, *c.Assigned)
	assert.Empty(t, c.Human)
	assert.Empty(t, c.Judge)
	assert.Equal(t, "relevance-4-point", c.Lock)
	assert.Contains(t, js.String(), `"human": []`)
	assert.Contains(t, js.String(), `"judge": []`)
}

// A panel that agrees on every case has alpha 1 and no interval (every
// resample of the cases gives 1; docs/calibrate.md, "The rater panel"): the
// report printed "95% CI —" with no reason, which reads as a missing
// bootstrap. It now says the interval cannot be estimated, and why.
func TestPanelAllAgreeSaysWhyNoInterval(t *testing.T) {
	lock, err := labelfile.ReadLock([]byte(`{"dimensions": {"g": {"construct": "support", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "raters": "panel"}`), "lock.json")
	require.NoError(t, err)
	var human, judge strings.Builder
	for i := range 40 {
		bin := i % 3
		for _, r := range []string{"ana", "bo", "cy"} {
			fmt.Fprintf(&human, `{"case_id":"c%02d","dimension":"g","bin":%d,"construct":"support","labeled_at":"2026-01-01T00:00:00Z","rater":%q}`+"\n", i, bin, r)
		}
		fmt.Fprintf(&judge, `{"case_id":"c%02d","dimension":"g","score":%g,"construct":"support","judged_at":"2026-02-01T00:00:00Z"}`+"\n", i, []float64{0.1, 0.5, 0.9}[bin])
	}
	res, err := calibrate.Run(context.Background(), calibrate.In{Lock: lock,
		Human: calibrate.Reader{Name: "human.jsonl", R: strings.NewReader(human.String())},
		Judge: calibrate.Reader{Name: "judge.jsonl", R: strings.NewReader(judge.String())}},
		calibrate.Options{Resamples: 200, Seed: 1})
	require.NoError(t, err)
	doc := calibratereport.New(res)
	var text, md bytes.Buffer
	require.NoError(t, doc.Text(&text))
	require.NoError(t, doc.Markdown(&md, "calibrate"))
	want := "Krippendorff's alpha 1.000, 95% CI —, over n = 40 case(s) with two or more labels (120 labels); its interval cannot be estimated: no case's labels disagree, so every resample of the cases gives alpha 1"
	assert.Contains(t, text.String(), want)
	assert.Contains(t, md.String(), want)
}
