/**
 * One uploaded file of a request, written to the staging directory while the request streamed in.
 * It travels through record validation as the value of its field and is put in place inside the
 * write's transaction; whatever does not reach a committed record is removed when the request settles.
 */
export class StagedFile {
  /** `staged`: still in the staging directory; `stored`: moved under its record, transaction open;
   * `committed`: its record committed; `discarded`: removed. */
  state: 'staged' | 'stored' | 'committed' | 'discarded' = 'staged';
  /** The storage key once stored. */
  key?: string;

  readonly name: string;
  readonly originalName: string;
  readonly tempPath: string;
  readonly size: number;
  readonly contentType: string;
  readonly tooLarge: boolean;

  constructor(file: {
    /** The stored name it will have (sanitized, with its random part). */
    name: string;
    /** The name the client sent, for messages. */
    originalName: string;
    /** Path of the staged copy; empty when nothing was kept (too large). */
    tempPath: string;
    /** Bytes received (for a file over its field's limit: more than the limit). */
    size: number;
    contentType: string;
    /** More bytes arrived than the field allows; the content was not kept. */
    tooLarge: boolean;
  }) {
    this.name = file.name;
    this.originalName = file.originalName;
    this.tempPath = file.tempPath;
    this.size = file.size;
    this.contentType = file.contentType;
    this.tooLarge = file.tooLarge;
  }

  /** Record JSON and rule inputs see an upload as the name it is stored under. */
  toJSON(): string {
    return this.name;
  }
}

export function isStagedFile(value: unknown): value is StagedFile {
  return value instanceof StagedFile;
}
