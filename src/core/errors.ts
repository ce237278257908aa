/** An error a user can meet and act on; its message says what is wrong and what to do. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}
