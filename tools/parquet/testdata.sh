#!/usr/bin/env bash
# Writes testdata/parquet (the worked example of docs/shards.md) with DuckDB, from the demo's
# JSONL cases and the TREC files of testdata/compare: the cases as Hive partitions by locale (a
# retrieved id string made an entry {id}, a Parquet list holding one type), the bm25 run as one
# Parquet file and the qrels as two shards. Run from the repository root after
# `cd tools/parquet && npm ci`.
set -euo pipefail
out=testdata/parquet
rm -rf "$out" && mkdir -p "$out/runs" "$out/qrels"
node tools/parquet/write.mjs \
  "COPY (SELECT id, locale, type, query, must_cite_one_of,
      list_transform(retrieved, x -> struct_pack(id := coalesce(x->>'id', x->>'\$'), parent_id := x->>'parent_id',
        score := CAST(x->>'score' AS DOUBLE), text := x->>'text')) AS retrieved
    FROM read_json('testdata/demo/cases.jsonl', format = 'newline_delimited'))
    TO '$out/cases' (FORMAT parquet, PARTITION_BY (locale), WRITE_PARTITION_COLUMNS true)" \
  "COPY (SELECT query_id, doc_id, rank, score, tag FROM read_csv('testdata/compare/bm25.trec', delim = ' ', header = false,
      columns = {'query_id': 'VARCHAR', 'q0': 'VARCHAR', 'doc_id': 'VARCHAR', 'rank': 'INTEGER', 'score': 'DOUBLE', 'tag': 'VARCHAR'}))
    TO '$out/runs/bm25.parquet' (FORMAT parquet)" \
  "CREATE TABLE qrels AS SELECT query_id, doc_id, relevance FROM read_csv('testdata/compare/qrels.trec', delim = ' ', header = false,
      columns = {'query_id': 'VARCHAR', 'iter': 'VARCHAR', 'doc_id': 'VARCHAR', 'relevance': 'INTEGER'})" \
  "COPY (SELECT * FROM qrels WHERE query_id < 'q050') TO '$out/qrels/part-00000.parquet' (FORMAT parquet)" \
  "COPY (SELECT * FROM qrels WHERE query_id >= 'q050') TO '$out/qrels/part-00001.parquet' (FORMAT parquet)"
