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
    /// The text as SQLite should run it: when the placeholders are `$1, $2, …` in order (every statement
    /// the builder numbered), each becomes an anonymous `?`, bound in order. Why: sqlx looks up the name of
    /// every parameter of a statement, and SQLite finds a name by a linear scan of all of them, so binding n
    /// named parameters costs n² (the book writer's 500-row inserts spent a fifth of its time there); anonymous
    /// parameters have no name to look up. A text whose placeholders repeat or skip (`with_args`) is kept.
    pub fn sqlite_text(&self) -> std::borrow::Cow<'_, str> {
        let bytes = self.text.as_bytes();
        let mut out = String::with_capacity(self.text.len());
        let (mut next, mut from, mut i) = (1usize, 0, 0);
        while i < bytes.len() {
            if bytes[i] != b'$' {
                i += 1;
                continue;
            }
            let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 {
                i += 1;
                continue;
            }
            if self.text[i + 1..i + 1 + digits].parse::<usize>() != Ok(next) {
                return std::borrow::Cow::Borrowed(&self.text);
            }
            out.push_str(&self.text[from..i]);
            out.push('?');
            next += 1;
            i += 1 + digits;
            from = i;
        }
        if next == 1 {
            return std::borrow::Cow::Borrowed(&self.text);
        }
        out.push_str(&self.text[from..]);
        std::borrow::Cow::Owned(out)
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

    #[test]
    fn sqlite_text_makes_ordered_placeholders_anonymous() {
        let mut sql = Sql::new("INSERT INTO t (a, b) VALUES (");
        sql.int(1)
            .push(", ")
            .text("x")
            .push("), (")
            .int(2)
            .push(", ")
            .text("y")
            .push(")");
        assert_eq!(sql.sqlite_text(), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)");
        // Repeated or reordered placeholders keep their numbers, so each still names its argument.
        let repeated = Sql::with_args("SELECT $1 WHERE a = $1 OR b = $2", vec![Arg::Int(1), Arg::Int(2)]);
        assert_eq!(repeated.sqlite_text(), repeated.text);
        let reordered = Sql::with_args("SELECT $2, $1", vec![Arg::Int(1), Arg::Int(2)]);
        assert_eq!(reordered.sqlite_text(), reordered.text);
        assert_eq!(Sql::new("SELECT 1").sqlite_text(), "SELECT 1");
    }
}
