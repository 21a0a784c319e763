/// <reference path="../pb_data/types.d.ts" />
// A small lending library, written for PocketBase (>= 0.23) and run by Cairn as it is.
// Collections: books (title, copies: number), loans (book: relation, member: relation to users,
// due: text, returned: bool).

// A loan takes a copy: refused when none is left; the count changes in the loan's transaction.
onRecordCreate((e) => {
  const lib = require(`${__hooks}/lib.js`);
  const book = $app.findRecordById("books", e.record.getString("book"));
  if (book.getInt("copies") < 1) {
    throw new BadRequestError("No copy of this book is left.", { book: { code: "validation_no_copy", message: "No copy left." } });
  }
  book.set("copies", book.getInt("copies") - 1);
  $app.save(book);
  e.record.set("due", lib.dueDate(lib.LOAN_DAYS));
  e.record.set("returned", false);
  e.next();
}, "loans");

// A member borrows for themselves only.
onRecordCreateRequest((e) => {
  const auth = e.requestInfo().auth;
  if (!e.hasSuperuserAuth() && (!auth || auth.id !== e.record.getString("member"))) {
    throw new ForbiddenError("Members borrow for themselves.");
  }
  e.next();
}, "loans");

// Returning a loan gives the copy back.
onRecordUpdate((e) => {
  if (e.record.getBool("returned") && !e.record.original().getBool("returned")) {
    const book = $app.findRecordById("books", e.record.getString("book"));
    book.set("copies+", 1);
    $app.save(book);
  }
  e.next();
}, "loans");

// The books most lent, by raw SQL.
routerAdd("GET", "/api/library/popular", (e) => {
  const rows = arrayOf(new DynamicModel({ title: "", loans: 0 }));
  $app.db()
    .newQuery("SELECT b.title AS title, COUNT(l.id) AS loans FROM books b LEFT JOIN loans l ON l.book = b.id GROUP BY b.id, b.title ORDER BY loans DESC, b.title LIMIT {:n}")
    .bind({ n: 5 })
    .all(rows);
  return e.json(200, rows);
});

// A member's open loans.
routerAdd("GET", "/api/library/mine", (e) => {
  const loans = $app.findRecordsByFilter("loans", "member = {:id} && returned = false", "due", 50, 0, { id: e.auth.id });
  $app.expandRecords(loans, ["book"]);
  return e.json(200, loans.map((l) => ({ book: l.expandedOne("book").getString("title"), due: l.getString("due") })));
}, $apis.requireAuth());

// Every night: a log line for each overdue loan.
cronAdd("overdue", "0 2 * * *", () => {
  const now = new Date().toISOString().replace("T", " ");
  const late = $app.findRecordsByFilter("loans", "returned = false && due < {:now}", "", 0, 0, { now });
  late.forEach((l) => $app.logger().warn("overdue loan", "loan", l.id, "member", l.getString("member")));
});
