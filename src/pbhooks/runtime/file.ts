/**
 * PocketBase's `filesystem.File` (`$filesystem.fileFromPath/Bytes/URL`): bytes with a name, set on a
 * record's file field and sent with the save as a `{ __file: 'bytes' }` marker.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import type { Realm } from './realm.ts';

export class PbFile {
  name: string;
  originalName: string;
  size: number;
  _b64: string;
  constructor(name: string, b64: string, size: number) {
    this.originalName = String(name || 'file');
    this.name = this.originalName;
    this._b64 = b64;
    this.size = size;
  }
  static of(bytes: any, name: string) {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes ?? []);
    return new PbFile(name, buf.toString('base64'), buf.length);
  }
  toJSON() {
    return { __file: 'bytes', name: this.originalName, bytes: this._b64, size: this.size };
  }
}
export const fileOfMarker = (m: any) => new PbFile(m.name, m.bytes, m.size ?? 0);

export function filesystemApi(rt: Realm) {
  return {
    fileFromPath: (p: string) => PbFile.of(fs.readFileSync(String(p)), nodePath.basename(String(p))),
    fileFromBytes: (b: any, name: string) => PbFile.of(b, String(name)),
    fileFromURL: (url: string) => fileOfMarker(rt.call('fileFromURL', String(url))),
    fileFromMultipart: (f: any) => {
      if (f instanceof PbFile) return f;
      throw new Error('$filesystem.fileFromMultipart: use e.findUploadedFiles(key) in Cairn');
    },
  };
}
