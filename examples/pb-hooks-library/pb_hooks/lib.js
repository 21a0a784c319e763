// Shared by the handlers: loaded with require(`${__hooks}/lib.js`) inside each handler, as
// PocketBase runs every handler from its own source.
module.exports = {
  /** Days a book may be kept. */
  LOAN_DAYS: 14,
  dueDate: (days) => new Date(Date.now() + days * 86400000).toISOString().replace("T", " "),
};
