// Runs each SQL statement given as an argument, in order, in an in-memory
// DuckDB (one thread, so a COPY writes its rows in the order they are read):
// the Parquet reader's tests (internal/cli/parquet_test.go) write their shards
// with it, as DuckDB's own COPY ... (FORMAT parquet) writes them.
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const conn = await db.connect();
for (const sql of process.argv.slice(2)) {
  await conn.run(sql);
}
