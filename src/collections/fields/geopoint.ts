import { type FieldType, invalid, ok } from './types.ts';

/**
 * PocketBase ≥ 0.26's `geoPoint`: `{lon, lat}` in degrees, stored as JSON; an unset point is
 * `{lon: 0, lat: 0}`, as in PocketBase.
 */
export const geoPointField: FieldType = {
  name: 'geoPoint',
  kind: 'json',
  multiple: () => false,
  normalizeOptions: () => ({}),
  prepare(value) {
    if (value === undefined || value === null || value === '') return ok({ lon: 0, lat: 0 });
    let v = value;
    if (typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        return invalid('validation_invalid_geo_point', 'Must be {"lon": number, "lat": number}.');
      }
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return invalid('validation_invalid_geo_point', 'Must be {"lon": number, "lat": number}.');
    const { lon, lat } = v as { lon?: unknown; lat?: unknown };
    const lonN = lon === undefined ? 0 : Number(lon);
    const latN = lat === undefined ? 0 : Number(lat);
    if (!Number.isFinite(lonN) || lonN < -180 || lonN > 180) return invalid('validation_invalid_longitude', 'Must be a number from -180 to 180.');
    if (!Number.isFinite(latN) || latN < -90 || latN > 90) return invalid('validation_invalid_latitude', 'Must be a number from -90 to 90.');
    return ok({ lon: lonN, lat: latN });
  },
  zero: () => ({ lon: 0, lat: 0 }),
  isEmpty: (value) => {
    const p = value as { lon?: number; lat?: number } | null | undefined;
    return !p || (!p.lon && !p.lat);
  },
  toDb: (value) => JSON.stringify(value ?? { lon: 0, lat: 0 }),
  fromDb(raw) {
    if (typeof raw !== 'string' || raw === '') return { lon: 0, lat: 0 };
    try {
      const p = JSON.parse(raw) as { lon?: unknown; lat?: unknown };
      return { lon: Number(p?.lon) || 0, lat: Number(p?.lat) || 0 };
    } catch {
      return { lon: 0, lat: 0 };
    }
  },
};
