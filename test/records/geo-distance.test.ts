import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

/**
 * PocketBase's `geoDistance(lonA, latA, lonB, latB)` (≥ 0.26): the haversine distance in kilometres,
 * in filters and rules, over a geoPoint's `.lon`/`.lat`, number fields and values, on both engines.
 */
describe('geoDistance in filters and rules', () => {
  let server: TestServer;
  const SOFIA = { lon: 23.3219, lat: 42.6977 };

  before(async () => {
    server = await startServer();
    await createCollection(server, {
      name: 'places',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'location', type: 'geoPoint' },
        { name: 'radius', type: 'number' },
      ],
      listRule: '',
      viewRule: '',
    });
    for (const [name, lon, lat, radius] of [
      ['Sofia', 23.3219, 42.6977, 10],
      ['Plovdiv', 24.7453, 42.1354, 200],
      ['London', -0.1276, 51.5072, 5],
    ] as const) {
      const res = await server.admin('POST', '/api/collections/places/records', { body: { name, location: { lon, lat }, radius } });
      assert.equal(res.status, 200, res.text);
    }
    // Only places within 500 km of the point the client names.
    const rule = 'geoDistance(location.lon, location.lat, @request.query.lon, @request.query.lat) < 500';
    await createCollection(server, { name: 'nearby', type: 'view', viewQuery: 'SELECT id, name, location FROM places', listRule: rule });
  });
  after(() => server?.close());

  const names = async (filter: string, collection = 'places', query = '') => {
    const res = await server.request('GET', `/api/collections/${collection}/records?sort=name&filter=${encodeURIComponent(filter)}${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body.items.map((r: { name: string }) => r.name);
  };

  test('distances from a point, to a field, and a point to itself', async () => {
    assert.deepEqual(await names(`geoDistance(location.lon, location.lat, ${SOFIA.lon}, ${SOFIA.lat}) < 25`), ['Sofia']);
    // Sofia–Plovdiv is some 132 km; London is over 2,000 away.
    assert.deepEqual(await names(`geoDistance(location.lon, location.lat, ${SOFIA.lon}, ${SOFIA.lat}) < 200`), ['Plovdiv', 'Sofia']);
    assert.deepEqual(await names(`geoDistance(${SOFIA.lon}, ${SOFIA.lat}, location.lon, location.lat) > 2000`), ['London']);
    // Within each place's own radius of Sofia: Sofia (0 ≤ 10) and Plovdiv (132 ≤ 200), not London.
    assert.deepEqual(await names(`geoDistance(location.lon, location.lat, ${SOFIA.lon}, ${SOFIA.lat}) <= radius`), ['Plovdiv', 'Sofia']);
    assert.deepEqual(await names('geoDistance(location.lon, location.lat, location.lon, location.lat) = 0'), ['London', 'Plovdiv', 'Sofia']);
  });

  test('in a rule, with the request\'s values', async () => {
    assert.deepEqual(await names('', 'nearby', `&lon=${SOFIA.lon}&lat=${SOFIA.lat}`), ['Plovdiv', 'Sofia']);
    assert.deepEqual(await names('', 'nearby', '&lon=-0.1&lat=51.5'), ['London']);
  });

  test('bad calls are the filter\'s 400', async () => {
    for (const filter of [
      'geoDistance(location.lon, location.lat, 1) < 5',
      'geoDistance(location.lon, location.lat, "a", 1) < 5',
      'geoDistance(location.lon, location.lat, 1, 2',
      'distance(location.lon, location.lat, 1, 2) < 5',
      'location.height > 1',
      'geoDistance(location.lon, location.lat, geoDistance(1, 2, 3, 4), 2) < 5',
    ]) {
      const res = await server.request('GET', `/api/collections/places/records?filter=${encodeURIComponent(filter)}`);
      assert.equal(res.status, 400, `${filter}: ${res.text}`);
      assert.equal(res.body.status, 400);
    }
  });
});
