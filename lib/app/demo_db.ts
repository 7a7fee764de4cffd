/**
 * The embedded demo: a small shop in SQLite (customers, products, orders,
 * order items; foreign keys, indexes and a view), so `deno task serve` is
 * useful on a machine with no database server. The data is generated from a
 * fixed seed: every install gets the same shop.
 *
 * @module
 */

import { ensureAppDataDir } from "./paths.ts";
import {
  CONNECTIONS_FILE,
  DEMO_CONNECTION_NAME,
  DEMO_DB_FILE,
} from "../base/identity.ts";
import { connectionsText, type SavedConnection } from "./connections.ts";
import { editFile } from "./file_lock.ts";
import { inAppDir } from "./paths.ts";

const SCHEMA = `
CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  full_name TEXT NOT NULL,
  country TEXT NOT NULL,
  created_at DATETIME NOT NULL,
  is_vip BOOLEAN NOT NULL DEFAULT 0
);
CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  price DECIMAL(10,2) NOT NULL CHECK (price >= 0),
  stock INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
  ordered_at DATETIME NOT NULL,
  shipping_country TEXT NOT NULL
);
CREATE TABLE order_items (
  order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price DECIMAL(10,2) NOT NULL,
  PRIMARY KEY (order_id, product_id)
);
CREATE INDEX orders_customer_idx ON orders(customer_id);
CREATE INDEX orders_status_date_idx ON orders(status, ordered_at);
CREATE INDEX order_items_product_idx ON order_items(product_id);
CREATE INDEX products_category_idx ON products(category);
CREATE VIEW order_totals AS
  SELECT o.id AS order_id, o.customer_id, o.status, o.ordered_at,
         SUM(i.quantity * i.unit_price) AS total, SUM(i.quantity) AS items
    FROM orders o JOIN order_items i ON i.order_id = o.id
   GROUP BY o.id;
`;

const FIRST = [
  "Ada",
  "Alan",
  "Grace",
  "Linus",
  "Margaret",
  "Ken",
  "Barbara",
  "Dennis",
  "Frances",
  "Tim",
  "Radia",
  "Guido",
  "Sophie",
  "Yukihiro",
  "Anders",
  "Hedy",
  "Edsger",
  "Donald",
  "Lovisa",
  "Mateo",
];
const LAST = [
  "Lovelace",
  "Turing",
  "Hopper",
  "Torvalds",
  "Hamilton",
  "Thompson",
  "Liskov",
  "Ritchie",
  "Allen",
  "Berners-Lee",
  "Perlman",
  "van Rossum",
  "Wilson",
  "Matsumoto",
  "Hejlsberg",
  "Lamarr",
  "Dijkstra",
  "Knuth",
  "Åkesson",
  "García",
];
const COUNTRIES = ["US", "GB", "DE", "FR", "JP", "BR", "SE", "IN", "CA", "ES"];
const CATEGORIES: Record<string, string[]> = {
  Books: [
    "Database Internals",
    "SQL Antipatterns",
    "Designing Data-Intensive Applications",
    "The Art of SQL",
    "Query Tuning Handbook",
  ],
  Hardware: [
    "Mechanical Keyboard",
    "USB-C Dock",
    '27" Monitor',
    "Ergonomic Mouse",
    "NVMe SSD 2 TB",
  ],
  Apparel: ["Hoodie", "T-Shirt", "Cap", "Socks", "Rain Jacket"],
  Office: ["Notebook", "Desk Lamp", "Standing Desk", "Whiteboard", "Pen Set"],
};
const STATUSES = [
  "pending",
  "paid",
  "shipped",
  "delivered",
  "delivered",
  "delivered",
  "cancelled",
];

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

/** Insert rows in chunks of multi-row INSERTs. */
function inserts(table: string, rows: string[][]): string {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    out.push(
      `INSERT INTO ${table} VALUES ${
        rows.slice(i, i + 500).map((row) => `(${row.join(", ")})`).join(",\n")
      };`,
    );
  }
  return out.join("\n");
}

/** Write the demo database at `path` (which must not exist yet). */
export async function createDemoDatabase(path: string): Promise<void> {
  const next = random(20261121);
  const pick = <T>(items: readonly T[]): T =>
    items[Math.floor(next() * items.length)]!;
  const start = Date.UTC(2025, 0, 1);
  const span = Date.UTC(2026, 9, 31) - start;

  const customers: string[][] = [];
  for (let id = 1; id <= 500; id++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const email = `${first}.${last}.${id}@example.com`.toLowerCase()
      .replaceAll(" ", "").normalize("NFD").replace(/[^\x20-\x7e]/g, "");
    customers.push([
      String(id),
      quote(email),
      quote(`${first} ${last}`),
      quote(pick(COUNTRIES)),
      quote(stamp(start + next() * span * 0.5)),
      next() < 0.08 ? "1" : "0",
    ]);
  }
  const products: string[][] = [];
  const prices: number[] = [0];
  let productId = 0;
  for (const [category, names] of Object.entries(CATEGORIES)) {
    for (const name of names) {
      for (const variant of ["", " Pro", " Mini", " XL", " Classic", " Eco"]) {
        productId++;
        const price = Math.round((5 + next() * 395) * 100) / 100;
        prices.push(price);
        products.push([
          String(productId),
          quote(
            `${category.slice(0, 3).toUpperCase()}-${
              String(productId).padStart(4, "0")
            }`,
          ),
          quote(`${name}${variant}`),
          quote(category),
          price.toFixed(2),
          String(Math.floor(next() * 500)),
        ]);
      }
    }
  }
  const orders: string[][] = [];
  const items: string[][] = [];
  for (let id = 1; id <= 2000; id++) {
    const customer = customers[Math.floor(next() * customers.length)]!;
    orders.push([
      String(id),
      customer[0]!,
      quote(pick(STATUSES)),
      quote(stamp(start + span * 0.3 + next() * span * 0.7)),
      customer[3]!,
    ]);
    const seen = new Set<number>();
    const count = 1 + Math.floor(next() * 4);
    while (seen.size < count) seen.add(1 + Math.floor(next() * productId));
    for (const product of seen) {
      items.push([
        String(id),
        String(product),
        String(1 + Math.floor(next() * 3)),
        prices[product]!.toFixed(2),
      ]);
    }
  }

  // Imported here: the SQLite driver's native library is loaded only when a
  // demo is made, not into every idle server (docs/performance.md "Memory").
  const { default: Database } = await import("libsql/promise");
  const db = new Database(path, {});
  try {
    await db.exec(
      [
        "BEGIN;",
        SCHEMA,
        inserts("customers", customers),
        inserts("products", products),
        inserts("orders", orders),
        inserts("order_items", items),
        "COMMIT;",
        "ANALYZE;",
      ].join("\n"),
    );
  } finally {
    db.close();
  }
}

/**
 * When no connections file exists, create the demo database and a saved
 * connection to it. Returns the connection, or null when the user already
 * has a connections file (even an empty one).
 */
export async function ensureDemo(
  home: string,
): Promise<SavedConnection | null> {
  const connectionsPath = inAppDir(home, CONNECTIONS_FILE);
  try {
    await Deno.lstat(connectionsPath);
    return null;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const dbPath = inAppDir(home, DEMO_DB_FILE);
  await ensureAppDataDir(home);
  try {
    await Deno.lstat(dbPath);
  } catch {
    // Built under another name and renamed, so a crash never leaves a half
    // shop. The rollback journal (not WAL) keeps every committed page in the
    // main file, so the rename moves the whole database.
    const partial = `${dbPath}.partial`;
    for (const suffix of ["", "-journal", "-wal", "-shm"]) {
      await Deno.remove(partial + suffix).catch(() => {});
    }
    await createDemoDatabase(partial);
    await Deno.rename(partial, dbPath);
  }
  const connection: SavedConnection = {
    id: crypto.randomUUID(),
    name: DEMO_CONNECTION_NAME,
    engine: "sqlite",
    url: dbPath,
    externalAccess: "readWrite",
    aiPolicy: "alwaysAllow",
    safeMode: "alert",
  };
  // A file someone saved meanwhile is kept as it is.
  const written = await editFile(
    connectionsPath,
    (text) => text === null ? connectionsText([connection]) : null,
  );
  return written === null ? null : connection;
}
