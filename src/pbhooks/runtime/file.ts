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

/**
 * PocketBase's `FormData` for `$http.send({ body: form })`: text values and files
 * (`$filesystem.fileFrom…`), sent as multipart/form-data by the host.
 */
export class PbFormData {
  private readonly list: [string, string | PbFile][] = [];
  append(key: any, value: any): void {
    this.list.push([String(key), value instanceof PbFile ? value : String(value ?? '')]);
  }
  set(key: any, value: any): void {
    this.delete(key);
    this.append(key, value);
  }
  delete(key: any): void {
    for (let i = this.list.length - 1; i >= 0; i--) if (this.list[i][0] === String(key)) this.list.splice(i, 1);
  }
  get(key: any): string | PbFile | null {
    return this.list.find(([k]) => k === String(key))?.[1] ?? null;
  }
  getAll(key: any): (string | PbFile)[] {
    return this.list.filter(([k]) => k === String(key)).map(([, v]) => v);
  }
  has(key: any): boolean {
    return this.list.some(([k]) => k === String(key));
  }
  keys(): string[] {
    return [...new Set(this.list.map(([k]) => k))];
  }
  values(): (string | PbFile)[] {
    return this.list.map(([, v]) => v);
  }
  entries(): [string, string | PbFile][] {
    return this.list.map(([k, v]) => [k, v]);
  }
  /** What crosses to the host. */
  toJSON(): { __formData: [string, unknown][] } {
    return { __formData: this.list.map(([k, v]) => [k, v instanceof PbFile ? v.toJSON() : v]) };
  }
}

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
