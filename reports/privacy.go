package reports

// LoanCategory is the SQL expression for a loan's patron category, in every
// query of this package that counts or filters loans by category. Such a query
// joins the loan (alias l) to its patron (alias p) with LEFT JOIN, so a loan
// whose patron is gone still counts.
//
// Anonymised loans (migration 0013) have patron_id NULL and keep
// their category in loans.patron_category_id, so they still count. Migration
// 0012's own backfill of loan_stats runs before 0013 exists, and uses
// p.category_id directly.
const LoanCategory = "coalesce(l.patron_category_id, p.category_id)"

// loanPatronJoin joins a loan (l) to its patron (p), keeping the loans that have
// none (anonymised: see package privacy).
const loanPatronJoin = ` LEFT JOIN patrons p ON p.id = l.patron_id`
