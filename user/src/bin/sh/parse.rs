//! The shell's grammar: text to tokens to a tree, nothing run yet.
//!
//! What it accepts, a subset of POSIX sh small enough to read:
//!
//! ```text
//! list      := and_or ( (';' | '&' | newline) and_or )*
//! and_or    := pipeline ( ('&&' | '||') newline* pipeline )*
//! pipeline  := ['!'] command ( '|' newline* command )*
//! command   := simple
//!            | '{' list '}' redirect*              run here
//!            | '(' list ')' redirect*              run in a forked copy
//!            | 'if' list 'then' list ('elif' list 'then' list)* ['else' list] 'fi'
//!            | ('while' | 'until') list 'do' list 'done'
//!            | 'for' NAME ['in' word*] (';' | newline) 'do' list 'done'
//! simple    := (NAME=word)* (word | redirect)*
//! redirect  := [digit] ('<' | '>' | '>>' | '<&' | '>&') word
//! ```
//!
//! A word is made of parts: literal text, quoted or not ('single quotes'
//! keep everything, "double quotes" and a backslash keep all but `$`), and
//! variables: `$NAME`, `${NAME}`, `$?` (the last status), `$$` (the
//! shell's pid), `$!` (the last background job's), `$#`, `$0`..`$9`, `$@`
//! and `$*`. Expanding a word (sh/main.rs) splits unquoted variables at
//! blanks. There is no globbing, no command substitution, no functions,
//! no here-documents and no `case`. Keywords (`if`, `then`, `{` ...) are
//! keywords only where a command starts, and only unquoted. `#` starts a
//! comment at the start of a word.
//!
//! An input that stops in the middle of a command (`if true; then`) is
//! `Incomplete`, not wrong: the shell reads another line and tries again.

use alloc::string::String;
use alloc::vec::Vec;

/// One piece of a word.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Text; `quoted` if it came from quotes or a backslash (never split,
    /// never a keyword).
    Text { text: String, quoted: bool },
    /// A variable to expand; split at blanks unless `quoted`.
    Var { name: String, quoted: bool },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Word {
    pub parts: Vec<Part>,
}

impl Word {
    /// The word as plain text, if it is one unquoted piece of text (what a
    /// keyword or a variable name must be).
    pub fn plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [
                Part::Text {
                    text,
                    quoted: false,
                },
            ] => Some(text),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirKind {
    /// `<`: read a file.
    In,
    /// `>`: write a file, emptied first.
    Out,
    /// `>>`: write at a file's end.
    Append,
    /// `<&` and `>&`: a copy of another descriptor.
    Dup,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Redir {
    pub fd: i32,
    pub kind: RedirKind,
    pub target: Word,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(Word),
    /// `|`, `||`, `&`, `&&`, `;`, `(`, `)`.
    Op(&'static str),
    Redir(Option<i32>, &'static str),
    Newline,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Simple {
        assigns: Vec<(String, Word)>,
        words: Vec<Word>,
        redirs: Vec<Redir>,
    },
    Group(List, Vec<Redir>),
    Subshell(List, Vec<Redir>),
    If {
        arms: Vec<(List, List)>,
        otherwise: Option<List>,
    },
    While {
        until: bool,
        cond: List,
        body: List,
    },
    For {
        var: String,
        items: Option<Vec<Word>>,
        body: List,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// `!`: the status is inverted.
    pub bang: bool,
    pub commands: Vec<Command>,
}

/// Pipelines joined by `&&` and `||`: `rest` holds (is `&&`, pipeline).
#[derive(Clone, Debug, PartialEq)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(bool, Pipeline)>,
}

/// And-or lists in order, each with whether it runs in the background.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct List {
    pub items: Vec<(AndOr, bool)>,
}

#[derive(Debug, PartialEq)]
pub enum Error {
    /// The input ends inside a command: more lines may complete it.
    Incomplete,
    /// The input is wrong, whatever follows.
    Syntax(String),
}

fn syntax<T>(what: &str) -> Result<T, Error> {
    Err(Error::Syntax(String::from(what)))
}

/// Parses a whole input (one line, or a script).
pub fn parse(text: &str) -> Result<List, Error> {
    let tokens = tokenize(text)?;
    let mut parser = Parser { tokens, at: 0 };
    let list = parser.list(&[])?;
    match parser.peek() {
        None => Ok(list),
        Some(Token::Op(op)) => Err(Error::Syntax(alloc::format!("unexpected `{op}`"))),
        Some(Token::Word(w)) => Err(Error::Syntax(alloc::format!(
            "unexpected `{}`",
            w.plain().unwrap_or("word")
        ))),
        Some(_) => syntax("unexpected token"),
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn tokenize(text: &str) -> Result<Vec<Token>, Error> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' => {
                chars.next();
            }
            '\n' => {
                chars.next();
                tokens.push(Token::Newline);
            }
            '#' => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '|' | '&' | ';' | '(' | ')' => {
                chars.next();
                let doubled = chars.peek() == Some(&c) && c != ';' && c != '(' && c != ')';
                if doubled {
                    chars.next();
                }
                tokens.push(Token::Op(match (c, doubled) {
                    ('|', true) => "||",
                    ('|', false) => "|",
                    ('&', true) => "&&",
                    ('&', false) => "&",
                    (';', _) => ";",
                    ('(', _) => "(",
                    _ => ")",
                }));
            }
            '<' | '>' => tokens.push(Token::Redir(None, redirection(&mut chars))),
            _ => {
                let word = word(&mut chars)?;
                // `2>file`: digits right before a redirection name a descriptor.
                if let (Some(digits), Some('<' | '>')) = (word.plain(), chars.peek())
                    && let Ok(fd) = digits.parse::<i32>()
                {
                    tokens.push(Token::Redir(Some(fd), redirection(&mut chars)));
                } else {
                    tokens.push(Token::Word(word));
                }
            }
        }
    }
    Ok(tokens)
}

fn redirection(chars: &mut core::iter::Peekable<core::str::Chars>) -> &'static str {
    let first = chars.next();
    match (first, chars.peek()) {
        (Some('>'), Some('>')) => {
            chars.next();
            ">>"
        }
        (Some('>'), Some('&')) => {
            chars.next();
            ">&"
        }
        (Some('<'), Some('&')) => {
            chars.next();
            "<&"
        }
        (Some('>'), _) => ">",
        _ => "<",
    }
}

/// Adds `c` to the text part being built, starting a new part when the
/// quoting changes.
fn push_text(parts: &mut Vec<Part>, c: char, quoted: bool) {
    if let Some(Part::Text { text, quoted: q }) = parts.last_mut()
        && *q == quoted
    {
        text.push(c);
        return;
    }
    parts.push(Part::Text {
        text: String::from(c),
        quoted,
    });
}

/// A `$` expansion (the `$` taken): its name, or None for a lone `$`.
fn variable(chars: &mut core::iter::Peekable<core::str::Chars>) -> Result<Option<String>, Error> {
    match chars.peek() {
        Some('{') => {
            chars.next();
            let mut name = String::new();
            loop {
                match chars.next() {
                    Some('}') => break,
                    Some(c) => name.push(c),
                    None => return Err(Error::Incomplete),
                }
            }
            Ok(Some(name))
        }
        Some(&c) if "?$!#@*".contains(c) || c.is_ascii_digit() => {
            chars.next();
            Ok(Some(String::from(c)))
        }
        Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
            let mut name = String::new();
            while let Some(&c) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '_') {
                    break;
                }
                name.push(c);
                chars.next();
            }
            Ok(Some(name))
        }
        _ => Ok(None),
    }
}

/// A quote begins: even `''` makes a (quoted, empty) part, so the word
/// exists and expands to one empty field.
fn open_quote(parts: &mut Vec<Part>) {
    parts.push(Part::Text {
        text: String::new(),
        quoted: true,
    });
}

fn word(chars: &mut core::iter::Peekable<core::str::Chars>) -> Result<Word, Error> {
    let mut parts = Vec::new();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' | '\n' | '|' | '&' | ';' | '(' | ')' | '<' | '>' => break,
            '\'' => {
                chars.next();
                open_quote(&mut parts);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => push_text(&mut parts, c, true),
                        None => return Err(Error::Incomplete),
                    }
                }
            }
            '"' => {
                chars.next();
                open_quote(&mut parts);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('$' | '"' | '\\' | '`')) => push_text(&mut parts, c, true),
                            Some('\n') => {}
                            Some(c) => {
                                push_text(&mut parts, '\\', true);
                                push_text(&mut parts, c, true);
                            }
                            None => return Err(Error::Incomplete),
                        },
                        Some('$') => match variable(chars)? {
                            Some(name) => parts.push(Part::Var { name, quoted: true }),
                            None => push_text(&mut parts, '$', true),
                        },
                        Some(c) => push_text(&mut parts, c, true),
                        None => return Err(Error::Incomplete),
                    }
                }
            }
            '\\' => {
                chars.next();
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => push_text(&mut parts, c, true),
                    None => return Err(Error::Incomplete),
                }
            }
            '$' => {
                chars.next();
                match variable(chars)? {
                    Some(name) => parts.push(Part::Var {
                        name,
                        quoted: false,
                    }),
                    None => push_text(&mut parts, '$', false),
                }
            }
            _ => {
                push_text(&mut parts, c, false);
                chars.next();
            }
        }
    }
    Ok(Word { parts })
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

/// Words that end a list: what closes the command the list is inside.
const CLOSERS: [&str; 7] = ["then", "elif", "else", "fi", "do", "done", "}"];

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    /// The next token, if it is the unquoted word `keyword`.
    fn at_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.plain() == Some(keyword))
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Token::Op(o)) if *o == op)
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), Error> {
        self.skip_newlines();
        if self.at_keyword(keyword) {
            self.next();
            Ok(())
        } else if self.peek().is_none() {
            Err(Error::Incomplete)
        } else {
            Err(Error::Syntax(alloc::format!("`{keyword}` expected")))
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Token::Newline) {
            self.next();
        }
    }

    /// And-or lists up to the end, a `)`, or one of `closers`.
    fn list(&mut self, closers: &[&str]) -> Result<List, Error> {
        let mut list = List::default();
        loop {
            self.skip_newlines();
            if self.peek().is_none()
                || self.at_op(")")
                || closers.iter().any(|k| self.at_keyword(k))
            {
                return Ok(list);
            }
            let and_or = self.and_or()?;
            let background = self.at_op("&");
            if background || self.at_op(";") {
                self.next();
            } else if !matches!(self.peek(), None | Some(Token::Newline))
                && !self.at_op(")")
                && !closers.iter().any(|k| self.at_keyword(k))
            {
                return syntax("`;` or a new line expected");
            }
            list.items.push((and_or, background));
        }
    }

    fn and_or(&mut self) -> Result<AndOr, Error> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        while self.at_op("&&") || self.at_op("||") {
            let and = self.at_op("&&");
            self.next();
            self.skip_newlines();
            rest.push((and, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&mut self) -> Result<Pipeline, Error> {
        let bang = self.at_keyword("!");
        if bang {
            self.next();
        }
        let mut commands = alloc::vec![self.command()?];
        while self.at_op("|") {
            self.next();
            self.skip_newlines();
            commands.push(self.command()?);
        }
        Ok(Pipeline { bang, commands })
    }

    /// A list that must not be empty, closed by `closer`.
    fn body(&mut self, closers: &[&str], what: &str) -> Result<List, Error> {
        let list = self.list(closers)?;
        if self.peek().is_none() {
            return Err(Error::Incomplete);
        }
        if list.items.is_empty() {
            return Err(Error::Syntax(alloc::format!("empty {what}")));
        }
        Ok(list)
    }

    fn command(&mut self) -> Result<Command, Error> {
        match self.peek() {
            None => return Err(Error::Incomplete),
            Some(Token::Op("(")) => {
                self.next();
                let list = self.list(&[])?;
                match self.next() {
                    Some(Token::Op(")")) if !list.items.is_empty() => {}
                    Some(Token::Op(")")) => return syntax("empty ( )"),
                    None => return Err(Error::Incomplete),
                    Some(_) => return syntax("`)` expected"),
                }
                return Ok(Command::Subshell(list, self.redirs()?));
            }
            Some(Token::Op(op)) => return Err(Error::Syntax(alloc::format!("unexpected `{op}`"))),
            _ => {}
        }
        if self.at_keyword("{") {
            self.next();
            let list = self.body(&["}"], "{ }")?;
            self.expect_keyword("}")?;
            return Ok(Command::Group(list, self.redirs()?));
        }
        if self.at_keyword("if") {
            self.next();
            let mut arms = Vec::new();
            let mut otherwise = None;
            loop {
                let cond = self.body(&CLOSERS, "condition")?;
                self.expect_keyword("then")?;
                let then = self.body(&CLOSERS, "then")?;
                arms.push((cond, then));
                if self.at_keyword("elif") {
                    self.next();
                    continue;
                }
                if self.at_keyword("else") {
                    self.next();
                    otherwise = Some(self.body(&CLOSERS, "else")?);
                }
                self.expect_keyword("fi")?;
                return Ok(Command::If { arms, otherwise });
            }
        }
        if self.at_keyword("while") || self.at_keyword("until") {
            let until = self.at_keyword("until");
            self.next();
            let cond = self.body(&CLOSERS, "condition")?;
            self.expect_keyword("do")?;
            let body = self.body(&CLOSERS, "loop")?;
            self.expect_keyword("done")?;
            return Ok(Command::While { until, cond, body });
        }
        if self.at_keyword("for") {
            self.next();
            let var = match self.next() {
                Some(Token::Word(w)) if w.plain().is_some_and(is_name) => {
                    String::from(w.plain().unwrap_or_default())
                }
                None => return Err(Error::Incomplete),
                _ => return syntax("`for` needs a variable name"),
            };
            self.skip_newlines();
            let items = if self.at_keyword("in") {
                self.next();
                let mut items = Vec::new();
                while let Some(Token::Word(w)) = self.peek() {
                    items.push(w.clone());
                    self.next();
                }
                Some(items)
            } else {
                None
            };
            if self.at_op(";") {
                self.next();
            }
            self.expect_keyword("do")?;
            let body = self.body(&CLOSERS, "loop")?;
            self.expect_keyword("done")?;
            return Ok(Command::For { var, items, body });
        }
        if CLOSERS.iter().any(|k| self.at_keyword(k)) {
            let word = match self.peek() {
                Some(Token::Word(w)) => w.plain().unwrap_or_default(),
                _ => "",
            };
            return Err(Error::Syntax(alloc::format!("unexpected `{word}`")));
        }
        self.simple()
    }

    fn redirs(&mut self) -> Result<Vec<Redir>, Error> {
        let mut redirs = Vec::new();
        while let Some(Token::Redir(..)) = self.peek() {
            redirs.push(self.redir()?);
        }
        Ok(redirs)
    }

    fn redir(&mut self) -> Result<Redir, Error> {
        let Some(Token::Redir(fd, op)) = self.next() else {
            return syntax("a redirection expected");
        };
        let target = match self.next() {
            Some(Token::Word(w)) => w,
            None => return Err(Error::Incomplete),
            _ => return syntax("a redirection needs a file name"),
        };
        let (default, kind) = match op {
            "<" => (0, RedirKind::In),
            "<&" => (0, RedirKind::Dup),
            ">" => (1, RedirKind::Out),
            ">>" => (1, RedirKind::Append),
            _ => (1, RedirKind::Dup),
        };
        Ok(Redir {
            fd: fd.unwrap_or(default),
            kind,
            target,
        })
    }

    fn simple(&mut self) -> Result<Command, Error> {
        let (mut assigns, mut words, mut redirs) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            match self.peek() {
                Some(Token::Redir(..)) => redirs.push(self.redir()?),
                Some(Token::Word(w)) => {
                    let w = w.clone();
                    self.next();
                    match assignment(&w) {
                        Some(assign) if words.is_empty() => assigns.push(assign),
                        _ => words.push(w),
                    }
                }
                _ => break,
            }
        }
        if assigns.is_empty() && words.is_empty() && redirs.is_empty() {
            return syntax("empty command");
        }
        Ok(Command::Simple {
            assigns,
            words,
            redirs,
        })
    }
}

/// `NAME=value` (the name unquoted): the name and the value's word.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let Some(Part::Text {
        text,
        quoted: false,
    }) = w.parts.first()
    else {
        return None;
    };
    let (name, value) = text.split_once('=')?;
    if !is_name(name) {
        return None;
    }
    let mut parts = Vec::from(&w.parts[1..]);
    if !value.is_empty() {
        parts.insert(
            0,
            Part::Text {
                text: String::from(value),
                quoted: false,
            },
        );
    }
    Some((String::from(name), Word { parts }))
}
