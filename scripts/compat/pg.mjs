// PostgreSQL databases for the harnesses' runs: one created per run (from a template when given),
// dropped after it. The URL names the server; its path is replaced by the database worked on.

import pg from 'pg';

async function admin(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const quoted = (name) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected database name ${name}`);
  return `"${name}"`;
};

export function createDatabase(url, name, template) {
  return admin(url, `CREATE DATABASE ${quoted(name)}${template ? ` TEMPLATE ${quoted(template)}` : ''}`);
}

export function dropDatabase(url, name) {
  return admin(url, `DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`);
}
