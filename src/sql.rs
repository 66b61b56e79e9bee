//! SQL inside tool arguments (issue 29, 5): SQL servers take a query string, so the only value
//! a harness could compare was the text. Here a statement is parsed with `sqlparser` (the
//! dialect named per suite or matrix) and compared by meaning, and the tables and columns it
//! names are listed so the flow engine can ground them like any other reference.
//!
//! [`normalize`] gives one spelling per statement: keyword case and whitespace (the parser's),
//! identifier case and quoting, table aliases (`FROM people p … p.name` is `people.name`, and
//! with one table just `name`), the operands of `AND`/`OR` chains, of `=`/`<>` and of `IN`
//! lists in sorted order, `1 < x` as `x > 1`, and the select list as a set with its column
//! aliases dropped. What it cannot decide: two different statements with the same result
//! (a join written as a subquery, the tables of a join in another order, `BETWEEN` against
//! two comparisons, `COUNT(id)` against `COUNT(*)`), the order of a select list when the order matters to the reader, a
//! `GROUP BY`/`ORDER BY` that names a column alias, and anything the parser refuses (then the
//! text is compared as written).
//!
//! [`names`] lists what a statement reads or writes — tables, columns and the literals it
//! compares with — minus what it defines itself (CTEs, aliases, a created table's name and
//! columns).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use sqlparser::ast::{
    AssignmentTarget, BinaryOperator, Expr, Ident, InTarget, ObjectName, ObjectNamePart, Query,
    Select, SelectItem, Statement, TableFactor, Value, ValueWithSpan, Visit, VisitMut, Visitor,
    VisitorMut,
};
use sqlparser::dialect::{Dialect, GenericDialect, dialect_from_str};
use sqlparser::parser::Parser;

/// The dialects a suite or matrix may name (`sql_dialect:`, `{sql: …}`).
pub const DIALECTS: &[&str] = &[
    "generic",
    "ansi",
    "sqlite",
    "duckdb",
    "postgres",
    "mysql",
    "mssql",
    "bigquery",
    "snowflake",
    "redshift",
    "clickhouse",
    "databricks",
    "hive",
    "spark",
    "oracle",
];

fn dialect(name: Option<&str>) -> Box<dyn Dialect> {
    name.and_then(dialect_from_str)
        .unwrap_or_else(|| Box::new(GenericDialect))
}

/// Whether `name` is a dialect this build parses.
pub fn is_dialect(name: &str) -> bool {
    DIALECTS.contains(&name) && dialect_from_str(name).is_some()
}

/// Whether an argument of this name is read as SQL when its text reads as SQL
/// ([`looks_like_sql`]): `query`, `sql`, `statement`, `sql_query`.
pub(crate) fn sql_name(name: &[u8]) -> bool {
    matches!(name, b"query" | b"sql" | b"statement" | b"sql_query")
}

/// Whether a string looks like SQL at all (its first word is a statement keyword): the cheap
/// test before a parse.
pub(crate) fn looks_like_sql(text: &str) -> bool {
    const KEYWORDS: [&str; 15] = [
        "select", "insert", "update", "delete", "with", "create", "drop", "alter", "describe",
        "desc", "show", "pragma", "replace", "truncate", "explain",
    ];
    let first = text
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(first))
}

fn parse(sql: &str, dialect_name: Option<&str>) -> Option<Vec<Statement>> {
    Parser::parse_sql(&*dialect(dialect_name), sql)
        .ok()
        .filter(|s| !s.is_empty())
}

/// The statements of `sql` in one spelling per meaning (see the module doc); `None` when the
/// parser refuses the text.
pub fn normalize(sql: &str, dialect_name: Option<&str>) -> Option<String> {
    let mut statements = parse(sql, dialect_name)?;
    let mut aliases = Aliases::default();
    let _ = statements.visit(&mut aliases);
    let mut n = Normalizer {
        aliases: aliases.map,
        single: (aliases.tables.len() == 1)
            .then(|| aliases.tables.into_iter().next())
            .flatten(),
    };
    let _ = VisitMut::visit(&mut statements, &mut n);
    Some(
        statements
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(";\n"),
    )
}

/// Whether two SQL texts say the same (their [`normalize`]d forms are equal); texts the parser
/// refuses are compared as written, whitespace collapsed.
pub fn same(want: &str, got: &str, dialect_name: Option<&str>) -> bool {
    match (normalize(want, dialect_name), normalize(got, dialect_name)) {
        (Some(w), Some(g)) => w == g,
        _ => {
            let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            squash(want) == squash(got)
        }
    }
}

fn lower(id: &Ident) -> String {
    id.value.to_lowercase()
}

fn last_part(name: &ObjectName) -> Option<String> {
    match name.0.last()? {
        ObjectNamePart::Identifier(id) => Some(lower(id)),
        ObjectNamePart::Function(_) => None,
    }
}

/// Table aliases (alias → table) and the tables a statement names.
#[derive(Default)]
struct Aliases {
    map: BTreeMap<String, String>,
    tables: BTreeSet<String>,
}

impl Visitor for Aliases {
    type Break = ();

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, alias, .. } = t
            && let Some(table) = last_part(name)
        {
            if let Some(a) = alias {
                self.map.insert(lower(&a.name), table.clone());
            }
            self.tables.insert(table);
        }
        ControlFlow::Continue(())
    }
}

struct Normalizer {
    aliases: BTreeMap<String, String>,
    /// The one table of the statement, when it names one: its qualifiers are noise.
    single: Option<String>,
}

fn sort_by_text(items: &mut [Expr]) {
    items.sort_by_cached_key(ToString::to_string);
}

/// The operands of a chain of `op` (through parentheses around the same operator).
fn chain(e: Expr, op: &BinaryOperator, out: &mut Vec<Expr>) {
    match e {
        Expr::BinaryOp { left, op: o, right } if &o == op => {
            chain(*left, op, out);
            chain(*right, op, out);
        }
        Expr::Nested(inner) if matches!(&*inner, Expr::BinaryOp { op: o, .. } if o == op) => {
            chain(*inner, op, out)
        }
        other => out.push(other),
    }
}

impl VisitorMut for Normalizer {
    type Break = ();

    fn pre_visit_ident(&mut self, id: &mut Ident) -> ControlFlow<()> {
        id.value = id.value.to_lowercase();
        id.quote_style = None;
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { alias, .. } = t
            && alias.as_ref().is_some_and(|a| a.columns.is_empty())
        {
            *alias = None;
        }
        ControlFlow::Continue(())
    }

    fn post_visit_select(&mut self, s: &mut Select) -> ControlFlow<()> {
        for item in &mut s.projection {
            if let SelectItem::ExprWithAlias { expr, .. } = item {
                *item = SelectItem::UnnamedExpr(expr.clone());
            }
        }
        s.projection.sort_by_cached_key(ToString::to_string);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                let q = lower(&parts[0]);
                let table = self.aliases.get(&q).cloned().unwrap_or(q);
                if self.single.as_ref() == Some(&table) {
                    *e = Expr::Identifier(parts[1].clone());
                } else {
                    parts[0].value = table;
                }
            }
            Expr::BinaryOp {
                op: op @ (BinaryOperator::And | BinaryOperator::Or),
                ..
            } => {
                let op = op.clone();
                let mut items = Vec::new();
                chain(
                    std::mem::replace(e, Expr::value(Value::Null)),
                    &op,
                    &mut items,
                );
                sort_by_text(&mut items);
                let mut it = items.into_iter();
                let first = it.next().unwrap_or(Expr::value(Value::Null));
                *e = it.fold(first, |left, right| Expr::BinaryOp {
                    left: Box::new(left),
                    op: op.clone(),
                    right: Box::new(right),
                });
            }
            Expr::BinaryOp { left, op, right } => {
                let flip = match op {
                    BinaryOperator::Eq | BinaryOperator::NotEq => {
                        Some(op.clone()).filter(|_| left.to_string() > right.to_string())
                    }
                    BinaryOperator::Lt if matches!(**left, Expr::Value(_)) => {
                        Some(BinaryOperator::Gt)
                    }
                    BinaryOperator::Gt if matches!(**left, Expr::Value(_)) => {
                        Some(BinaryOperator::Lt)
                    }
                    BinaryOperator::LtEq if matches!(**left, Expr::Value(_)) => {
                        Some(BinaryOperator::GtEq)
                    }
                    BinaryOperator::GtEq if matches!(**left, Expr::Value(_)) => {
                        Some(BinaryOperator::LtEq)
                    }
                    _ => None,
                };
                if let Some(new) = flip {
                    std::mem::swap(left, right);
                    *op = new;
                }
            }
            Expr::In {
                target: InTarget::List(list),
                ..
            } => sort_by_text(list),
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// What a statement names: the tables and columns it reads or writes and the literals it
/// compares with, lower-cased, each once, minus what it defines itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Names {
    /// Tables (and views) it reads or writes.
    pub tables: Vec<String>,
    /// Columns it reads or writes.
    pub columns: Vec<String>,
    /// String and number literals, as written (strings without quotes).
    pub literals: Vec<String>,
}

/// The [`Names`] of `sql`; `None` when the parser refuses it.
pub fn names(sql: &str, dialect_name: Option<&str>) -> Option<Names> {
    let statements = parse(sql, dialect_name)?;
    let mut c = Collector::default();
    let _ = statements.visit(&mut c);
    let keep = |set: BTreeSet<String>, defined: &BTreeSet<String>| -> Vec<String> {
        set.into_iter()
            .filter(|n| !defined.contains(n) && !is_system(n))
            .collect()
    };
    // The columns of a catalogue query (`information_schema.columns`, `sqlite_master`) are the
    // catalogue's own.
    let columns = if c.system {
        Vec::new()
    } else {
        keep(c.columns, &c.defined)
    };
    Some(Names {
        tables: keep(c.tables, &c.defined),
        columns,
        literals: c.literals.into_iter().collect(),
    })
}

/// Catalogue tables every engine has (`sqlite_master`, `information_schema`, …) and the row
/// ids every schema in the field has (`rowid`, `id`): known without anyone naming them.
fn is_system(name: &str) -> bool {
    ["sqlite_", "duckdb_", "pg_", "information_schema"]
        .iter()
        .any(|p| name.starts_with(p))
        || matches!(name, "rowid" | "oid" | "_rowid_" | "dual" | "id")
}

#[derive(Default)]
struct Collector {
    tables: BTreeSet<String>,
    columns: BTreeSet<String>,
    literals: BTreeSet<String>,
    defined: BTreeSet<String>,
    /// Whether it reads a catalogue table.
    system: bool,
}

impl Collector {
    fn column(&mut self, name: &ObjectName) {
        if let Some(c) = last_part(name) {
            self.columns.insert(c);
        }
    }
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        for cte in q.with.iter().flat_map(|w| &w.cte_tables) {
            self.defined.insert(lower(&cte.alias.name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        for item in &s.projection {
            if let SelectItem::ExprWithAlias { alias, .. } = item {
                self.defined.insert(lower(alias));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        let alias = match t {
            TableFactor::Table { alias, .. }
            | TableFactor::Derived { alias, .. }
            | TableFactor::Function { alias, .. }
            | TableFactor::UNNEST { alias, .. } => alias.as_ref(),
            _ => None,
        };
        if let Some(a) = alias {
            self.defined.insert(lower(&a.name));
            for c in &a.columns {
                self.defined.insert(lower(&c.name));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, r: &ObjectName) -> ControlFlow<()> {
        if let Some(t) = last_part(r) {
            let system = is_system(&t)
                || (r.0.len() >= 2
                    && matches!(&r.0[0], ObjectNamePart::Identifier(s) if is_system(&lower(s))));
            if system {
                self.system = true;
            } else {
                self.tables.insert(t);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, s: &Statement) -> ControlFlow<()> {
        match s {
            Statement::CreateTable(c) => {
                if let Some(t) = last_part(&c.name) {
                    self.defined.insert(t);
                }
                for col in &c.columns {
                    self.defined.insert(lower(&col.name));
                }
            }
            Statement::Insert(i) => {
                for c in &i.columns {
                    self.column(c);
                }
            }
            Statement::Update(u) => {
                for a in &u.assignments {
                    match &a.target {
                        AssignmentTarget::ColumnName(c) => self.column(c),
                        AssignmentTarget::Tuple(cs) => cs.iter().for_each(|c| self.column(c)),
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(id) if id.quote_style != Some('\'') => {
                self.columns.insert(lower(id));
            }
            Expr::CompoundIdentifier(parts) => {
                if let Some(c) = parts.last() {
                    self.columns.insert(lower(c));
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_value(&mut self, v: &ValueWithSpan) -> ControlFlow<()> {
        match &v.value {
            Value::Number(n, _) => {
                self.literals.insert(n.clone());
            }
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                self.literals.insert(s.clone());
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_per_meaning() {
        let same_as = |a: &str, b: &str| {
            assert_eq!(normalize(a, None), normalize(b, None), "{a}  ≠  {b}");
        };
        same_as(
            "SELECT name, born FROM people WHERE born > 1800 AND name = 'Ada'",
            "select born,name\nfrom People where 'Ada' = name and 1800 < born;",
        );
        same_as(
            "SELECT p.name FROM people AS p WHERE p.id IN (3, 1, 2)",
            "SELECT \"name\" FROM people WHERE id IN (1, 2, 3)",
        );
        same_as(
            "SELECT COUNT(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id",
            "select count(*) from orders join customers on customers.id = orders.customer_id",
        );
        let differ = |a: &str, b: &str| {
            assert_ne!(normalize(a, None), normalize(b, None), "{a}  =  {b}");
        };
        differ("SELECT name FROM people", "SELECT name FROM peple");
        differ(
            "UPDATE orders SET status = 'x' WHERE id = 3",
            "UPDATE orders SET status = 'x'",
        );
        differ(
            "SELECT a FROM t WHERE a > 1 OR b = 2",
            "SELECT a FROM t WHERE a > 1 AND b = 2",
        );
        differ(
            "SELECT a FROM t WHERE id = 1003",
            "SELECT a FROM t WHERE id = 1005",
        );
        assert!(same("not sql at  all", "not sql at all", None));
        assert!(!same("SELECT 1", "not sql", None));
    }

    #[test]
    fn names_lists_what_a_statement_reads_and_writes() {
        let n = names(
            "WITH recent AS (SELECT * FROM orders WHERE placed > '2026-01-01') \
             SELECT c.full_name, COUNT(*) AS total FROM recent r JOIN customers c ON r.customer_id = c.id \
             GROUP BY c.full_name ORDER BY total DESC",
            Some("duckdb"),
        )
        .unwrap();
        assert_eq!(n.tables, ["customers", "orders"]);
        assert_eq!(n.columns, ["customer_id", "full_name", "placed"]);
        assert_eq!(n.literals, ["2026-01-01"]);
        let n = names(
            "UPDATE loans SET returned = 1 WHERE loan_id = 7001",
            Some("sqlite"),
        )
        .unwrap();
        assert_eq!(n.tables, ["loans"]);
        assert_eq!(n.columns, ["loan_id", "returned"]);
        assert_eq!(n.literals, ["1", "7001"]);
        let n = names("CREATE TABLE notes (id INTEGER, body TEXT)", None).unwrap();
        assert!(n.tables.is_empty() && n.columns.is_empty(), "{n:?}");
        let n = names(
            "SELECT name FROM sqlite_master WHERE type = 'table'",
            Some("sqlite"),
        )
        .unwrap();
        assert!(n.tables.is_empty(), "{n:?}");
        assert!(names("this is not sql", None).is_none());
    }
}
