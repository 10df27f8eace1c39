//! The statement builder: SQL text with bound arguments, run on either backend.
//!
//! Statements are assembled as text with `$N` placeholders plus a list of [`Arg`]s. Both backends accept
//! `$N` (sqlx-sqlite maps `$N` to the N-th argument), so one builder serves both, and only the fragments
//! where the dialects really differ (full-text matching, `sum()` types) branch on [`Dialect`]. User input never
//! enters the text: every value is an argument, and LIKE patterns are escaped by `catalog::search::Needle`.

/// The two SQL dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A bound argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
    /// A nullable column's value.
    OptInt(Option<i64>),
    OptText(Option<String>),
    OptBytes(Option<Vec<u8>>),
}

/// A statement under construction: text with `$N` placeholders and the arguments they refer to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sql {
    pub text: String,
    pub args: Vec<Arg>,
}

impl Sql {
    /// A fixed statement whose `$N` placeholders the caller numbered (`$N` may repeat), with its arguments.
    pub fn with_args(text: &str, args: Vec<Arg>) -> Self {
        Sql {
            text: text.to_string(),
            args,
        }
    }

    pub fn new(text: &str) -> Self {
        Sql {
            text: text.to_string(),
            args: Vec::new(),
        }
    }
    /// Appends SQL text (never user input).
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }
    /// Appends a placeholder bound to `v`.
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.args.push(Arg::Int(v));
        self.placeholder()
    }
    /// Appends a placeholder bound to `v`.
    pub fn text(&mut self, v: &str) -> &mut Self {
        self.args.push(Arg::Text(v.to_string()));
        self.placeholder()
    }
    /// Appends a placeholder bound to `v`.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.args.push(Arg::Bytes(v.to_vec()));
        self.placeholder()
    }
    /// Appends a placeholder bound to `v` (NULL when `None`).
    pub fn opt_bytes(&mut self, v: Option<&[u8]>) -> &mut Self {
        self.args.push(Arg::OptBytes(v.map(<[u8]>::to_vec)));
        self.placeholder()
    }
    fn placeholder(&mut self) -> &mut Self {
        self.text.push('$');
        self.text.push_str(&self.args.len().to_string());
        self
    }
}

/// ` LIMIT $n OFFSET $m`.
pub(crate) fn page(sql: &mut Sql, limit: u32, offset: u32) {
    sql.push(" LIMIT ")
        .int(i64::from(limit))
        .push(" OFFSET ")
        .int(i64::from(offset));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_count_arguments() {
        let mut sql = Sql::new("SELECT 1 WHERE a = ");
        sql.text("x").push(" AND b = ").int(2);
        assert_eq!(sql.text, "SELECT 1 WHERE a = $1 AND b = $2");
        assert_eq!(sql.args, vec![Arg::Text("x".into()), Arg::Int(2)]);
    }
}
