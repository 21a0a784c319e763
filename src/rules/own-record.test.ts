// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { USERS_OWN_RECORD_RULE } from '../collections/service.ts';
import type { RecordAuth } from '../context.ts';
import { holdsOnOwnRecord } from './own-record.ts';
import { parseFilter } from './parser.ts';

const caller: RecordAuth = { type: 'record', id: 'abc123def456ghi', collectionId: '_pb_users_auth_', collectionName: 'users', record: {} };
const holds = (rule: string) => holdsOnOwnRecord(parseFilter(rule), caller);

test('decided from the caller alone: the own-record rules, either way round, with the collection', () => {
  for (const rule of [
    'id = @request.auth.id',
    '@request.auth.id = id',
    USERS_OWN_RECORD_RULE,
    "@request.auth.collectionId = '_pb_users_auth_' && id = @request.auth.id",
    "id = 'abc123def456ghi'",
    // One side surely true is enough for `||`, whatever the other reads.
    'id = @request.auth.id || verified = true',
    'verified = true || (name ~ "x" || @request.auth.id = id)',
  ]) {
    assert.equal(holds(rule), true, rule);
  }
});

test("anything else is left to the rule's SQL: other fields, other operators, empty text, another collection", () => {
  for (const rule of [
    'id = @request.auth.id && verified = true',
    'verified = true',
    'id != @request.auth.id',
    'id ~ @request.auth.id',
    '@request.auth.id != ""',
    'id = ""',
    '@request.auth.verified = true && id = @request.auth.id',
    'id = @request.auth.id && @request.auth.collectionName = "admins"',
    "id = 'someoneelse0000'",
    // Texts equal only up to case are equal under some collations: not decided here.
    'id = "ABC123DEF456GHI"',
    'id ?= @request.auth.id',
  ]) {
    assert.equal(holds(rule), false, rule);
  }
});
