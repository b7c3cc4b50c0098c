/** An admin write that cannot be done as asked: unknown name, duplicate, or a record still in use. */
export class RecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RecordError";
  }
}
