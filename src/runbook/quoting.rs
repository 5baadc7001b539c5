//! How a variable's value is quoted where it lands in a SQL statement, a PromQL query or a
//! shell script.
//!
//! The template is lexed by its target's own rules (PostgreSQL's, PromQL's, POSIX sh's) to
//! find where each `{{variable}}` sits: inside a string literal, a quoted name, a comment, or
//! bare in the code. Inside quotes the value is escaped by that quote's rules, so no value can
//! end the literal it is in; bare, a SQL or PromQL value must be a number (or a PromQL
//! duration) and anything else is refused, while a shell word is single-quoted whole. A value
//! never becomes code: `x'; COMMIT; DROP TABLE t; --` stays one string.
//!
//! The same lexer counts a SQL statement's commands, so that a `sql` step runs exactly one.

/// The language a template is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Sql,
    PromQl,
    /// A POSIX shell script (`sh -c SCRIPT`).
    Shell,
}

/// Where a variable sits in a statement, query or script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Bare in the code.
    Bare,
    /// SQL `'…'`: quotes doubled; a backslash is refused (an escape where
    /// `standard_conforming_strings` is off).
    SqlString,
    /// SQL `E'…'`: quotes doubled, backslashes doubled.
    SqlEscapeString,
    /// SQL `"…"`, a name: double quotes doubled.
    SqlIdentifier,
    /// SQL `$tag$…$tag$`: a value holding `$` is refused.
    SqlDollar,
    /// A comment (SQL `--`, `/* */`; PromQL and shell `#`): a line break or comment mark refused.
    Comment,
    /// PromQL `"…"` or `'…'`; `regex`: the value of a `=~` or `!~` matcher, matched literally.
    PromString { quote: char, regex: bool },
    /// PromQL `` `…` ``, a raw string: a backtick is refused.
    PromRaw { regex: bool },
    /// Shell `'…'`.
    ShellSingle,
    /// Shell `"…"`.
    ShellDouble,
}

impl Place {
    /// `value` as it must be written at this place in `lang`, or why it cannot be.
    pub fn quote(self, lang: Lang, value: &str) -> Result<String, String> {
        if value.contains('\0') {
            return Err("it holds a NUL character".into());
        }
        match self {
            Place::Bare => bare(lang, value),
            Place::SqlString => {
                if value.contains('\\') {
                    return Err("it holds a backslash, which PostgreSQL may read as an escape inside '…'; write the literal as E'…' in the statement".into());
                }
                Ok(value.replace('\'', "''"))
            }
            Place::SqlEscapeString => Ok(value.replace('\\', "\\\\").replace('\'', "''")),
            Place::SqlIdentifier => Ok(value.replace('"', "\"\"")),
            Place::SqlDollar => refuse_any(value, &["$"], "inside a $$-quoted string"),
            Place::Comment => refuse_any(value, &["\n", "\r", "*/", "/*"], "inside a comment"),
            Place::PromString { quote, regex } => {
                let v = if regex {
                    regex::escape(value)
                } else {
                    value.to_string()
                };
                Ok(promql_string(&v, quote))
            }
            Place::PromRaw { regex } => {
                refuse_any(value, &["`"], "inside a `…` string")?;
                Ok(if regex {
                    regex::escape(value)
                } else {
                    value.to_string()
                })
            }
            Place::ShellSingle => Ok(value.replace('\'', "'\\''")),
            Place::ShellDouble => {
                let mut out = String::with_capacity(value.len());
                for c in value.chars() {
                    if matches!(c, '\\' | '"' | '$' | '`') {
                        out.push('\\');
                    }
                    out.push(c);
                }
                Ok(out)
            }
        }
    }

    /// What a bare variable must be in `lang` ("a number"), `None` where any value is quoted.
    pub fn bare_needs(lang: Lang) -> Option<&'static str> {
        match lang {
            Lang::Sql => Some("a number or true/false"),
            Lang::PromQl => Some("a number or a duration such as 5m"),
            Lang::Shell => None,
        }
    }
}

/// Every form `value` can take once quoted into any place (for masking a secret wherever
/// it was rendered), the value itself excluded.
pub fn quoted_forms(value: &str) -> Vec<String> {
    let mut places = vec![
        (Lang::Sql, Place::SqlString),
        (Lang::Sql, Place::SqlEscapeString),
        (Lang::Sql, Place::SqlIdentifier),
        (Lang::PromQl, Place::PromRaw { regex: true }),
        (Lang::Shell, Place::ShellSingle),
        (Lang::Shell, Place::ShellDouble),
    ];
    for quote in ['"', '\''] {
        for regex in [false, true] {
            places.push((Lang::PromQl, Place::PromString { quote, regex }));
        }
    }
    let mut forms: Vec<String> = Vec::new();
    for (lang, place) in places {
        if let Ok(q) = place.quote(lang, value)
            && q != value
            && !forms.contains(&q)
        {
            forms.push(q);
        }
    }
    forms
}

fn refuse_any(value: &str, marks: &[&str], place: &str) -> Result<String, String> {
    match marks.iter().find(|m| value.contains(**m)) {
        Some(m) => Err(format!("it holds {m:?}, which cannot go {place}")),
        None => Ok(value.to_string()),
    }
}

/// A value used bare: a SQL or PromQL value must be a number (a PromQL one may be a duration);
/// a shell word is single-quoted whole.
fn bare(lang: Lang, value: &str) -> Result<String, String> {
    let v = value.trim();
    let ok = match lang {
        Lang::Shell => return Ok(format!("'{}'", value.replace('\'', "'\\''"))),
        Lang::Sql => is_number(v) || v == "true" || v == "false",
        Lang::PromQl => is_number(v) || is_promql_duration(v),
    };
    if ok {
        Ok(v.to_string())
    } else {
        Err(format!(
            "it is used bare (outside quotes), where it must be {}",
            Place::bare_needs(lang).unwrap_or("quoted")
        ))
    }
}

/// A plain decimal number: `-12`, `0.5`, `1e6` (no `inf`, `NaN`, hex or spaces).
fn is_number(v: &str) -> bool {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    let (mantissa, exp) = match digits.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (digits, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = (!int.is_empty() || !frac.is_empty()) && all_digits(int) && all_digits(frac);
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exp_ok
}

/// A PromQL duration: one or more `<digits><unit>`, units ms, s, m, h, d, w, y.
fn is_promql_duration(v: &str) -> bool {
    let mut rest = v;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &rest[n..];
        let unit = ["ms", "s", "m", "h", "d", "w", "y"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// A value inside a PromQL string quoted with `quote`.
fn promql_string(v: &str, quote: char) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The lexer's state between characters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Code,
    SqlString,
    SqlEscapeString,
    SqlIdentifier,
    SqlDollar(String),
    LineComment,
    BlockComment(u32),
    PromString {
        quote: char,
        regex: bool,
    },
    PromRaw {
        regex: bool,
    },
    ShellSingle,
    ShellDouble,
    /// Shell: the next character is escaped (after `\` in code or in `"…"`).
    ShellEscape {
        in_double: bool,
    },
}

/// A shell substitution open in the script: its code is a command again until it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nest {
    /// `$(…)`; `in_double`: opened inside `"…"`.
    Paren { in_double: bool },
    /// `` `…` ``.
    Backtick { in_double: bool },
}

/// Lexes a template's text pieces in order; variables between them take the place the lexer is
/// in. Text after a variable is lexed as if the variable were not there, which is exact for
/// every quoted place (the value is escaped to stay inside its quotes) and for bare numbers.
#[derive(Debug, Clone)]
pub struct Lexer {
    lang: Lang,
    state: State,
    /// Shell: the substitutions open.
    nesting: Vec<Nest>,
    /// The last two characters of code that are not whitespace, to see `=~` and `!~`.
    recent: [char; 2],
    /// The last two characters, as written.
    last: [char; 2],
    /// SQL: the byte offset (in all that was fed) of the first `;` in code.
    separator: Option<usize>,
    /// SQL: whether code follows that `;` (a second command).
    after_separator: bool,
    /// Bytes fed before the current text.
    fed: usize,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

impl Lexer {
    pub fn new(lang: Lang) -> Lexer {
        Lexer {
            lang,
            state: State::Code,
            nesting: Vec::new(),
            recent: [' ', ' '],
            last: [' ', ' '],
            separator: None,
            after_separator: false,
            fed: 0,
        }
    }

    /// Where a variable placed now sits.
    pub fn place(&self) -> Place {
        match &self.state {
            State::Code | State::ShellEscape { .. } => Place::Bare,
            State::SqlString => Place::SqlString,
            State::SqlEscapeString => Place::SqlEscapeString,
            State::SqlIdentifier => Place::SqlIdentifier,
            State::SqlDollar(_) => Place::SqlDollar,
            State::LineComment | State::BlockComment(_) => Place::Comment,
            State::PromString { quote, regex } => Place::PromString {
                quote: *quote,
                regex: *regex,
            },
            State::PromRaw { regex } => Place::PromRaw { regex: *regex },
            State::ShellSingle => Place::ShellSingle,
            State::ShellDouble => Place::ShellDouble,
        }
    }

    /// A variable sits here (bare code after a `;` makes a second SQL command).
    pub fn variable(&mut self) {
        if self.state == State::Code {
            self.code_seen();
            // A value is a word: what follows it is not the start of one.
            self.last = ['x', 'x'];
        }
    }

    /// SQL: the byte offset of the `;` that ends the first command, when a second follows.
    pub fn second_command(&self) -> Option<usize> {
        self.separator.filter(|_| self.after_separator)
    }

    /// Whether the text ended inside a quote or block comment that is never closed.
    pub fn unclosed(&self) -> bool {
        !matches!(self.state, State::Code | State::LineComment)
    }

    fn code_seen(&mut self) {
        if self.separator.is_some() {
            self.after_separator = true;
        }
    }

    /// Lex `text`.
    pub fn feed(&mut self, text: &str) {
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let c = rest.chars().next().unwrap_or(' ');
            let was_code = self.state == State::Code;
            let step = match self.lang {
                Lang::Sql => self.sql(rest, c, self.fed + i),
                Lang::PromQl => self.promql(rest, c),
                Lang::Shell => self.shell(rest, c),
            };
            i += step.max(c.len_utf8());
            if was_code && !c.is_whitespace() {
                self.recent = [self.recent[1], c];
            }
            self.last = [self.last[1], c];
        }
        self.fed += text.len();
    }

    /// One SQL character (or a few, for marks); returns the bytes consumed.
    fn sql(&mut self, rest: &str, c: char, at: usize) -> usize {
        let next = rest[c.len_utf8()..].chars().next();
        match self.state.clone() {
            State::Code => {
                if c == ';' {
                    self.separator.get_or_insert(at);
                    return 1;
                }
                if rest.starts_with("--") {
                    self.state = State::LineComment;
                    return 2;
                }
                if rest.starts_with("/*") {
                    self.state = State::BlockComment(1);
                    return 2;
                }
                if !c.is_whitespace() {
                    self.code_seen();
                }
                match c {
                    // `E'…'` is an escape string only where the E is a word of its own.
                    '\'' if matches!(self.last[1], 'E' | 'e') && !is_word(self.last[0]) => {
                        self.state = State::SqlEscapeString;
                    }
                    '\'' => self.state = State::SqlString,
                    '"' => self.state = State::SqlIdentifier,
                    '$' if !is_word(self.last[1]) => {
                        if let Some(tag) = dollar_tag(rest) {
                            let n = tag.len() + 2;
                            self.state = State::SqlDollar(tag);
                            return n;
                        }
                    }
                    _ => {}
                }
                1
            }
            State::SqlString | State::SqlEscapeString => {
                if self.state == State::SqlEscapeString && c == '\\' {
                    return 1 + next.map_or(0, char::len_utf8);
                }
                if c == '\'' {
                    if next == Some('\'') {
                        return 2;
                    }
                    self.state = State::Code;
                }
                1
            }
            State::SqlIdentifier => {
                if c == '"' {
                    if next == Some('"') {
                        return 2;
                    }
                    self.state = State::Code;
                }
                1
            }
            State::SqlDollar(tag) => {
                let close = format!("${tag}$");
                if rest.starts_with(&close) {
                    self.state = State::Code;
                    return close.len();
                }
                1
            }
            State::LineComment => {
                if c == '\n' {
                    self.state = State::Code;
                }
                1
            }
            State::BlockComment(depth) => {
                if rest.starts_with("/*") {
                    self.state = State::BlockComment(depth + 1);
                    return 2;
                }
                if rest.starts_with("*/") {
                    self.state = match depth {
                        0 | 1 => State::Code,
                        d => State::BlockComment(d - 1),
                    };
                    return 2;
                }
                1
            }
            _ => 1,
        }
    }

    /// One PromQL character.
    fn promql(&mut self, rest: &str, c: char) -> usize {
        match self.state {
            State::Code => {
                let regex = matches!(self.recent, ['=', '~'] | ['!', '~']);
                match c {
                    '"' | '\'' => self.state = State::PromString { quote: c, regex },
                    '`' => self.state = State::PromRaw { regex },
                    '#' => self.state = State::LineComment,
                    _ => {}
                }
                1
            }
            State::PromString { quote, .. } => {
                if c == '\\' {
                    return 1 + rest[1..].chars().next().map_or(0, char::len_utf8);
                }
                if c == quote {
                    self.state = State::Code;
                }
                1
            }
            State::PromRaw { .. } => {
                if c == '`' {
                    self.state = State::Code;
                }
                1
            }
            State::LineComment => {
                if c == '\n' {
                    self.state = State::Code;
                }
                1
            }
            _ => 1,
        }
    }

    /// One shell character.
    fn shell(&mut self, rest: &str, c: char) -> usize {
        let opens_paren = c == '$' && rest[1..].starts_with('(');
        match self.state {
            State::Code => {
                match c {
                    '\\' => self.state = State::ShellEscape { in_double: false },
                    '\'' => self.state = State::ShellSingle,
                    '"' => self.state = State::ShellDouble,
                    '#' if !is_word(self.last[1]) => self.state = State::LineComment,
                    _ if opens_paren => {
                        self.nesting.push(Nest::Paren { in_double: false });
                        return 2;
                    }
                    '`' if matches!(self.nesting.last(), Some(Nest::Backtick { .. })) => {
                        self.close_substitution();
                    }
                    '`' => self.nesting.push(Nest::Backtick { in_double: false }),
                    ')' if matches!(self.nesting.last(), Some(Nest::Paren { .. })) => {
                        self.close_substitution();
                    }
                    _ => {}
                }
                1
            }
            State::ShellEscape { in_double } => {
                self.state = if in_double {
                    State::ShellDouble
                } else {
                    State::Code
                };
                1
            }
            State::ShellSingle => {
                if c == '\'' {
                    self.state = State::Code;
                }
                1
            }
            State::ShellDouble => {
                match c {
                    '\\' => self.state = State::ShellEscape { in_double: true },
                    '"' => self.state = State::Code,
                    _ if opens_paren => {
                        self.nesting.push(Nest::Paren { in_double: true });
                        self.state = State::Code;
                        return 2;
                    }
                    '`' => {
                        self.nesting.push(Nest::Backtick { in_double: true });
                        self.state = State::Code;
                    }
                    _ => {}
                }
                1
            }
            State::LineComment => {
                if c == '\n' {
                    self.state = State::Code;
                }
                1
            }
            _ => 1,
        }
    }

    /// The end of a `$(…)` or backtick substitution: back to where it was opened.
    fn close_substitution(&mut self) {
        if let Some(Nest::Paren { in_double: true } | Nest::Backtick { in_double: true }) =
            self.nesting.pop()
        {
            self.state = State::ShellDouble;
        }
    }
}

/// `$tag$` at the start of `rest` (tag empty or an identifier not starting with a digit).
fn dollar_tag(rest: &str) -> Option<String> {
    let body = &rest[1..];
    let end = body.find('$')?;
    let tag = &body[..end];
    let valid = tag.chars().enumerate().all(|(i, c)| {
        c == '_' || c.is_alphabetic() || (i > 0 && c.is_ascii_digit()) || !c.is_ascii()
    });
    valid.then(|| tag.to_string())
}

/// The shells whose `-c` argument is a script.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"];

/// The index of the argv element that a shell runs as a script (`sh -c SCRIPT`, `bash -ec
/// SCRIPT`), if the program is a known shell.
pub fn shell_script_index(argv: &[&str]) -> Option<usize> {
    let program = argv.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !SHELLS.contains(&name) {
        return None;
    }
    let mut i = 1;
    if name == "busybox" {
        // `busybox sh -c SCRIPT`
        if argv.get(1) != Some(&"sh") {
            return None;
        }
        i = 2;
    }
    while let Some(a) = argv.get(i) {
        if !a.starts_with('-') || *a == "--" {
            return None;
        }
        if !a.starts_with("--") && a[1..].contains('c') {
            return (i + 1 < argv.len()).then_some(i + 1);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests;
