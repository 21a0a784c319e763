/** A problem with filter or rule text, with the 0-based character position it was found at. */
export class FilterError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'FilterError';
  }

  /** "unexpected token at position 12" style text for API answers. */
  describe(): string {
    return `${this.message} (at position ${this.position})`;
  }
}
