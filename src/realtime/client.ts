/** A client's event stream, as the HTTP layer provides it (a `text/event-stream` response). */
export interface EventStream {
  /** Queues bytes on the connection (the first write sends the response headers). */
  write(chunk: Buffer | string): void;
  /** Bytes written and not yet handed to the operating system. */
  readonly buffered: number;
  /** Ends the stream once what is buffered is sent; the connection closes after it. */
  end(): void;
  /** Closes the connection at once, dropping what is buffered. */
  destroy(): void;
}

/** Why a client left, for the log. */
export type DropReason = 'slow' | 'unauthorized' | 'overload' | 'expired';

/**
 * The bytes of the last payload assembled, kept while a writer goes through its clients: the next
 * client holding the same frames (every client of one topic does, when they are written in the same
 * turn) is sent the same buffer instead of a copy of its own.
 */
export class SharedPayload {
  private frames: readonly Buffer[] = [];
  private bytes?: Buffer;

  of(frames: readonly Buffer[]): Buffer {
    if (frames.length === 1) return frames[0];
    if (!this.bytes || frames.length !== this.frames.length || frames.some((f, i) => f !== this.frames[i])) {
      this.frames = frames;
      this.bytes = Buffer.concat(frames);
    }
    return this.bytes;
  }
}

/**
 * One connected realtime client. Messages are queued as they are decided and written later in one
 * piece (all that queued up since the client's last write); a client whose stream still holds more
 * than `maxBuffered` unsent bytes when its next write is due does not read, and is dropped instead of
 * buffered without bound.
 */
export class RealtimeClient {
  // Who the client subscribes as and what it follows are kept by the registries above it
  // (`Identities`, `Audiences`), so this connection knows nothing of them.
  /** When the stream was opened (it ends after the longest a connection may last). */
  readonly connectedAt = Date.now();
  /** When something was last written (keep-alive comments go to streams idle for a while). */
  lastWrite = Date.now();
  closed = false;
  private pending: Buffer[] = [];

  constructor(
    readonly id: string,
    readonly stream: EventStream,
    private readonly maxBuffered: number,
    /** The address the stream was opened from; '' when not known (a client made in code). */
    readonly ip = '',
  ) {}

  /** Adds a message (a whole `event:…\ndata:…\n\n` frame, shared with other clients) to the next write. */
  queue(frame: Buffer): void {
    this.pending.push(frame);
  }

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /**
   * Writes the queued messages (or `text`) in one piece. Returns false, writing nothing, when the
   * stream still holds more than `maxBuffered` bytes from earlier writes: the peer is not reading, and
   * the caller drops the client. (A single write larger than the bound still goes to a client that
   * keeps up.) `shared` lets consecutive clients with the same frames share one buffer.
   */
  flush(text?: string, shared?: SharedPayload): boolean {
    if (this.closed) return true;
    if (text !== undefined) this.pending.push(Buffer.from(text));
    if (this.pending.length === 0) return true;
    const frames = this.pending;
    this.pending = [];
    if (this.stream.buffered > this.maxBuffered) return false;
    this.stream.write(shared ? shared.of(frames) : frames.length === 1 ? frames[0] : Buffer.concat(frames));
    this.lastWrite = Date.now();
    return true;
  }
}
