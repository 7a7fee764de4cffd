/**
 * A host dialog program for tests (`{"command": [deno, run, …, this file,
 * engine, url, sql]}`): it reads the request, runs `sql` on the database as
 * another session would while the user looks at the question, and approves
 * (exit 0). The write then runs after the data changed under its preview.
 *
 * @module
 */

import mysql from "mysql2/promise";
import postgres from "postgres";
import { DatabaseSync } from "node:sqlite";

const [engine, url, sql] = Deno.args;
await new Response(Deno.stdin.readable).text();
if (engine === "postgres") {
  const client = postgres(url!, { max: 1, onnotice: () => {} });
  await client.unsafe(sql!);
  await client.end();
} else if (engine === "mysql") {
  const connection = await mysql.createConnection(url!);
  await connection.query(sql!);
  await connection.end();
} else {
  const db = new DatabaseSync(url!);
  db.exec(sql!);
  db.close();
}
Deno.exit(0);
