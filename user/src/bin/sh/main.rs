//! /bin/sh: a small Unix shell.
//!
//! Runs programs with arguments, pipelines (`a | b | c`), redirections
//! (`< in`, `> out`, `>> out`, `2> err`, `2>&1`), lists (`a ; b`, `a &`
//! in the background), `a && b`, `a || b`, `! a`, groups (`{ a; b; }`),
//! subshells (`( a; b )`), `if`/`elif`/`else`, `while`/`until` and `for`,
//! variables (`NAME=value`, `$NAME`, `$?`, `$$`, `$!`, `$#`, `$1`...),
//! single and double quotes and backslashes. The grammar, and what it
//! leaves out, is written atop `parse.rs`, which turns text into a tree;
//! this file runs the tree. Built-ins: `cd`, `exit`, `help`, `test` and
//! `[`, `:`, `export`, `unset`, `wait`, `read`. A command that fails or is killed
//! gets its status printed, unless the script tests it (in a condition,
//! or left of `&&` and `||`). `sh -c 'COMMANDS' [NAME ARGS]` runs a line;
//! `sh FILE [ARGS]` a script, read whole, so a command may span lines.
//!
//! Interactive, it does job control the Unix way: each pipeline runs in a
//! process group of its own, made the console's foreground group while it
//! runs, so Ctrl-C (SIGINT from the console) reaches the pipeline and not the
//! shell; the shell catches SIGINT itself, which ends a half-typed line.
//! At a terminal it edits lines itself (`user::lineedit`): arrow keys and a
//! history; a line that leaves a command open (`if true; then`) asks for
//! the next with `> `.

#![no_std]
#![no_main]

extern crate alloc;

mod parse;

use abi::types::{O_APPEND, O_CREAT, O_RDONLY, O_TRUNC, O_WRONLY, WNOHANG};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use libc_lite::signal::{self, Handler};
use libc_lite::{Errno, eprintln, print, println, sys};
use parse::{AndOr, Command, List, Part, Pipeline, Redir, RedirKind, Word};

/// Whether this shell runs pipelines as foreground process groups.
static JOB_CONTROL: AtomicBool = AtomicBool::new(false);

libc_lite::entry!(run);

/// `exit` was run: unwinds to the top (or out of a forked child) with the
/// status to exit with.
struct Exit(i32);

type Run = Result<(), Exit>;

/// The shell's state: what `$` expands and what the environment holds.
struct Shell {
    vars: BTreeMap<String, String>,
    /// Variables passed to programs.
    exported: BTreeSet<String>,
    /// `$?`.
    status: i32,
    /// `$$`: the shell's pid, kept by subshells as POSIX says.
    pid: u32,
    /// `$!`.
    last_background: Option<u32>,
    /// Background jobs that ended before a `wait` asked: pid, wait status.
    finished: BTreeMap<u32, i32>,
    /// `$0`, `$1`, ...
    params: Vec<String>,
}

impl Shell {
    fn new(params: Vec<String>) -> Shell {
        let mut shell = Shell {
            vars: BTreeMap::new(),
            exported: BTreeSet::new(),
            status: 0,
            pid: sys::getpid(),
            last_background: None,
            finished: BTreeMap::new(),
            params,
        };
        for var in libc_lite::env::vars() {
            if let Some((name, value)) = var.split_once('=') {
                shell.vars.insert(name.to_string(), value.to_string());
                shell.exported.insert(name.to_string());
            }
        }
        for (name, value) in [("PATH", "/bin"), ("HOME", "/")] {
            if !shell.vars.contains_key(name) {
                shell.vars.insert(name.to_string(), value.to_string());
                shell.exported.insert(name.to_string());
            }
        }
        shell
    }

    /// The value of `$name`.
    fn lookup(&self, name: &str) -> String {
        match name {
            "?" => self.status.to_string(),
            "$" => self.pid.to_string(),
            "!" => self
                .last_background
                .map(|p| p.to_string())
                .unwrap_or_default(),
            "#" => self.params.len().saturating_sub(1).to_string(),
            "@" | "*" => self.params.get(1..).unwrap_or_default().join(" "),
            _ => match name.parse::<usize>() {
                Ok(i) => self.params.get(i).cloned().unwrap_or_default(),
                Err(_) => self.vars.get(name).cloned().unwrap_or_default(),
            },
        }
    }

    /// A word's fields: unquoted variables split at blanks; a word that
    /// comes to nothing unquoted is no field at all.
    fn fields(&self, word: &Word) -> Vec<String> {
        let mut fields = Vec::new();
        let mut current = String::new();
        let mut started = false;
        for part in &word.parts {
            match part {
                Part::Text { text, quoted } => {
                    current.push_str(text);
                    started |= *quoted || !text.is_empty();
                }
                Part::Var { name, quoted: true } => {
                    current.push_str(&self.lookup(name));
                    started = true;
                }
                Part::Var {
                    name,
                    quoted: false,
                } => {
                    let value = self.lookup(name);
                    let mut pieces = value.split([' ', '\t', '\n']).filter(|p| !p.is_empty());
                    let first_blank = value.starts_with([' ', '\t', '\n']);
                    if first_blank && started {
                        fields.push(core::mem::take(&mut current));
                        started = false;
                    }
                    if let Some(first) = pieces.next() {
                        current.push_str(first);
                        started = true;
                    }
                    for piece in pieces {
                        fields.push(core::mem::take(&mut current));
                        current.push_str(piece);
                    }
                    if value.ends_with([' ', '\t', '\n']) && started {
                        fields.push(core::mem::take(&mut current));
                        started = false;
                    }
                }
            }
        }
        if started {
            fields.push(current);
        }
        fields
    }

    /// A word as one string (assignments and redirection targets: no
    /// splitting).
    fn string(&self, word: &Word) -> String {
        let mut out = String::new();
        for part in &word.parts {
            match part {
                Part::Text { text, .. } => out.push_str(text),
                Part::Var { name, .. } => out.push_str(&self.lookup(name)),
            }
        }
        out
    }

    fn words(&self, words: &[Word]) -> Vec<String> {
        words.iter().flat_map(|w| self.fields(w)).collect()
    }

    /// Runs a list; `tested` if its statuses are a condition's.
    fn list(&mut self, list: &List, tested: bool) -> Run {
        for (and_or, background) in &list.items {
            if *background {
                self.background(and_or);
            } else {
                self.and_or(and_or, tested)?;
            }
        }
        Ok(())
    }

    /// `a && b || c`: each pipeline but the last is tested by the next.
    fn and_or(&mut self, and_or: &AndOr, tested: bool) -> Run {
        self.pipeline(&and_or.first, tested || !and_or.rest.is_empty())?;
        for (i, (and, pipeline)) in and_or.rest.iter().enumerate() {
            if (self.status == 0) == *and {
                let last = i + 1 == and_or.rest.len();
                self.pipeline(pipeline, tested || !last)?;
            }
        }
        Ok(())
    }

    /// `a &`: a forked copy of the shell runs it; `$!` is its pid.
    fn background(&mut self, and_or: &AndOr) {
        match sys::fork() {
            Ok(0) => {
                let jobs = JOB_CONTROL.swap(false, Ordering::Relaxed);
                if jobs {
                    // Out of the terminal's foreground group: Ctrl-C is
                    // not for it.
                    let _ = signal::setpgid(0, 0);
                }
                let code = match self.and_or(and_or, false) {
                    Ok(()) => self.status,
                    Err(Exit(code)) => code,
                };
                sys::exit(code)
            }
            Ok(pid) => {
                self.last_background = Some(pid);
                self.status = 0;
            }
            Err(e) => {
                eprintln!("sh: fork: {}", e.message());
                self.status = 1;
            }
        }
    }

    fn pipeline(&mut self, pipeline: &Pipeline, tested: bool) -> Run {
        let tested = tested || pipeline.bang;
        if let [command] = pipeline.commands.as_slice() {
            self.command(command, tested)?;
        } else {
            self.pipe(&pipeline.commands, tested);
        }
        if pipeline.bang {
            self.status = i32::from(self.status == 0);
        }
        Ok(())
    }

    /// Runs one command in this shell (a program in a child it waits for).
    fn command(&mut self, command: &Command, tested: bool) -> Run {
        match command {
            Command::Simple {
                assigns,
                words,
                redirs,
            } => {
                let argv = self.words(words);
                let Some(name) = argv.first() else {
                    // Assignments alone set shell variables; redirections
                    // alone make or open their files.
                    for (var, value) in assigns {
                        let value = self.string(value);
                        self.vars.insert(var.clone(), value);
                    }
                    let saved = self.redirect(redirs);
                    self.status = i32::from(saved.is_err());
                    restore(saved.unwrap_or_default());
                    return Ok(());
                };
                if is_builtin(name) {
                    let saved = match self.redirect(redirs) {
                        Ok(saved) => saved,
                        Err(()) => {
                            self.status = 1;
                            return Ok(());
                        }
                    };
                    // `IFS=: read a b`: assignments before a built-in hold
                    // while it runs, then the old values come back (POSIX's
                    // rule for the regular built-ins).
                    let mut before = Vec::new();
                    for (var, value) in assigns {
                        let value = self.string(value);
                        before.push((var.clone(), self.vars.insert(var.clone(), value)));
                    }
                    let result = self.builtin(&argv);
                    for (var, old) in before.into_iter().rev() {
                        match old {
                            Some(old) => self.vars.insert(var, old),
                            None => self.vars.remove(&var),
                        };
                    }
                    restore(saved);
                    return result;
                }
                let env = self.environment(assigns);
                self.status = self.spawn(&argv, &env, redirs, tested);
                Ok(())
            }
            Command::Group(list, redirs) => {
                let Ok(saved) = self.redirect(redirs) else {
                    self.status = 1;
                    return Ok(());
                };
                let result = self.list(list, tested);
                restore(saved);
                result
            }
            Command::Subshell(..) => {
                self.pipe(core::slice::from_ref(command), tested);
                Ok(())
            }
            Command::If { arms, otherwise } => {
                for (cond, then) in arms {
                    self.list(cond, true)?;
                    if self.status == 0 {
                        return self.list(then, tested);
                    }
                }
                self.status = 0;
                match otherwise {
                    Some(list) => self.list(list, tested),
                    None => Ok(()),
                }
            }
            Command::While { until, cond, body } => {
                let mut status = 0;
                loop {
                    self.list(cond, true)?;
                    if (self.status == 0) == *until {
                        break;
                    }
                    self.list(body, tested)?;
                    status = self.status;
                }
                self.status = status;
                Ok(())
            }
            Command::For { var, items, body } => {
                let items = match items {
                    Some(words) => self.words(words),
                    None => self.params.get(1..).unwrap_or_default().to_vec(),
                };
                self.status = 0;
                for item in items {
                    self.vars.insert(var.clone(), item);
                    self.list(body, tested)?;
                }
                Ok(())
            }
        }
    }

    /// What a program gets as its environment: the exported variables,
    /// then the command's own assignments.
    fn environment(&self, assigns: &[(String, Word)]) -> Vec<String> {
        let mut env: Vec<String> = self
            .exported
            .iter()
            .filter(|name| !assigns.iter().any(|(a, _)| a == *name))
            .filter_map(|name| Some(format!("{name}={}", self.vars.get(name)?)))
            .collect();
        env.extend(
            assigns
                .iter()
                .map(|(name, value)| format!("{name}={}", self.string(value))),
        );
        env
    }

    /// Applies `redirs` to this process; what it replaced, to `restore`.
    /// A file that cannot be opened is reported and undoes the rest.
    fn redirect(&self, redirs: &[Redir]) -> Result<Vec<(i32, Option<i32>)>, ()> {
        let mut saved = Vec::new();
        for redir in redirs {
            saved.push((redir.fd, sys::dup_above(redir.fd, 10).ok()));
            if let Err(e) = self.apply(redir) {
                eprintln!("sh: {}: {}", self.string(&redir.target), e.message());
                restore(saved);
                return Err(());
            }
        }
        Ok(saved)
    }

    /// Points descriptor `redir.fd` where the redirection says.
    fn apply(&self, redir: &Redir) -> Result<(), Errno> {
        let target = self.string(&redir.target);
        let flags = match redir.kind {
            RedirKind::Dup => {
                if target == "-" {
                    let _ = sys::close(redir.fd);
                    return Ok(());
                }
                let from = target.parse::<i32>().map_err(|_| Errno::EBADF)?;
                return sys::dup2(from, redir.fd).map(drop);
            }
            RedirKind::In => O_RDONLY,
            RedirKind::Out => O_WRONLY | O_CREAT | O_TRUNC,
            RedirKind::Append => O_WRONLY | O_CREAT | O_APPEND,
        };
        let fd = sys::open(&target, flags, 0o644)?;
        if fd != redir.fd {
            sys::dup2(fd, redir.fd)?;
            let _ = sys::close(fd);
        }
        Ok(())
    }

    /// Runs a pipeline of two or more commands, or a subshell, in forked
    /// children; `$?` is the last one's status.
    fn pipe(&mut self, commands: &[Command], tested: bool) {
        let mut pipes = Vec::new();
        for _ in 1..commands.len() {
            match sys::pipe() {
                Ok(p) => pipes.push(p),
                Err(e) => {
                    eprintln!("sh: pipe: {}", e.message());
                    close_all(&pipes);
                    self.status = 1;
                    return;
                }
            }
        }
        let children = self.fork_each(commands.len(), &pipes, |shell, i| shell.child(&commands[i]));
        close_all(&pipes);
        let name = match commands.last() {
            Some(Command::Simple { words, .. }) => self.words(words).into_iter().next(),
            _ => None,
        };
        self.status = self.wait_for(&children, name.as_deref().filter(|_| !tested));
    }

    /// Runs one program (argv, environment, redirections) in a child and
    /// waits for it.
    fn spawn(&mut self, argv: &[String], env: &[String], redirs: &[Redir], tested: bool) -> i32 {
        let children = self.fork_each(1, &[], |shell, _| {
            if shell.redirect(redirs).is_err() {
                sys::exit(1);
            }
            exec(argv, env)
        });
        self.wait_for(&children, (!tested).then_some(argv[0].as_str()))
    }

    /// Forks `count` children, the i-th wired to `pipes` and running
    /// `body(shell, i)`; under job control, all in one foreground group.
    fn fork_each(
        &mut self,
        count: usize,
        pipes: &[(i32, i32)],
        body: impl Fn(&mut Shell, usize) -> !,
    ) -> Vec<u32> {
        let jobs = JOB_CONTROL.load(Ordering::Relaxed);
        let mut children = Vec::new();
        for i in 0..count {
            let group = children.first().map_or(0, |&pid| pid as i32);
            match sys::fork() {
                Ok(0) => {
                    if jobs {
                        // The child takes the terminal for its job itself,
                        // as the parent does below: whichever runs first,
                        // the job is in the foreground before any of it
                        // runs. (Left to the parent alone, a child scheduled
                        // first could print and be sent Ctrl-C while the
                        // shell still held the terminal: the SIGINT went to
                        // the shell, the job ran on.)
                        let _ = signal::setpgid(0, group);
                        let leader = if group == 0 {
                            sys::getpid()
                        } else {
                            group as u32
                        };
                        let _ = signal::tcsetpgrp(0, leader);
                        JOB_CONTROL.store(false, Ordering::Relaxed);
                    }
                    if i > 0 {
                        let _ = sys::dup2(pipes[i - 1].0, 0);
                    }
                    if i + 1 < count {
                        let _ = sys::dup2(pipes[i].1, 1);
                    }
                    close_all(pipes);
                    body(self, i)
                }
                Ok(pid) => {
                    if jobs {
                        // Also here, so the group exists whichever runs first.
                        let _ = signal::setpgid(pid as i32, group);
                    }
                    children.push(pid);
                }
                Err(e) => eprintln!("sh: fork: {}", e.message()),
            }
        }
        if let (true, Some(&leader)) = (jobs, children.first()) {
            let _ = signal::tcsetpgrp(0, leader);
        }
        children
    }

    /// Waits for `children`; the last one's status, reported (when `name`
    /// is given) if it failed.
    fn wait_for(&mut self, children: &[u32], name: Option<&str>) -> i32 {
        let mut status = 1;
        for &pid in children {
            let raw = sys::waitpid(pid as i32).unwrap_or(0);
            status = decode(raw);
            if Some(&pid) == children.last()
                && let Some(name) = name
            {
                report(name, raw);
            }
        }
        if JOB_CONTROL.load(Ordering::Relaxed) {
            let _ = signal::tcsetpgrp(0, sys::getpid());
        }
        status
    }

    /// In a forked child: runs `command` and exits with its status.
    fn child(&mut self, command: &Command) -> ! {
        let code = match command {
            Command::Simple {
                assigns,
                words,
                redirs,
            } => {
                let argv = self.words(words);
                match argv.first() {
                    Some(name) if !is_builtin(name) => {
                        let env = self.environment(assigns);
                        if self.redirect(redirs).is_err() {
                            sys::exit(1);
                        }
                        exec(&argv, &env)
                    }
                    _ => self.command(command, false).map(|()| self.status),
                }
            }
            Command::Subshell(list, redirs) => match self.redirect(redirs) {
                Ok(_) => self.list(list, false).map(|()| self.status),
                Err(()) => Ok(1),
            },
            _ => self.command(command, false).map(|()| self.status),
        };
        sys::exit(code.unwrap_or_else(|Exit(code)| code))
    }

    fn builtin(&mut self, argv: &[String]) -> Run {
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        self.status = match args.as_slice() {
            ["cd", rest @ ..] => {
                let home = self.lookup("HOME");
                let dir = rest.first().copied().unwrap_or(&home);
                match sys::chdir(dir) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("cd: {dir}: {}", e.message());
                        1
                    }
                }
            }
            ["exit", rest @ ..] => {
                let code = rest
                    .first()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(self.status);
                return Err(Exit(code));
            }
            ["help", ..] => {
                help();
                0
            }
            [":", ..] => 0,
            ["test", rest @ ..] => test(rest),
            ["[", rest @ .., "]"] => test(rest),
            ["[", ..] => {
                eprintln!("[: missing ]");
                2
            }
            ["export", names @ ..] => {
                for name in names {
                    let name = match name.split_once('=') {
                        Some((name, value)) => {
                            self.vars.insert(name.to_string(), value.to_string());
                            name
                        }
                        None => name,
                    };
                    self.exported.insert(name.to_string());
                }
                0
            }
            ["unset", names @ ..] => {
                for name in names {
                    self.vars.remove(*name);
                    self.exported.remove(*name);
                }
                0
            }
            ["wait", pids @ ..] => self.wait_builtin(pids),
            ["read", "-r", names @ ..] => self.read_builtin(names, true),
            ["read", names @ ..] => self.read_builtin(names, false),
            _ => 127,
        };
        Ok(())
    }

    /// `read [-r] [NAME...]`: one line of standard input, split into
    /// fields at `$IFS` and given to the names in turn, the last taking
    /// the rest of the line (`REPLY` when no name is given, as bash and
    /// busybox do). Without `-r` a backslash keeps the next character from
    /// splitting, and one before the newline joins the next line. The
    /// line is read a byte at a time, so what follows it stays for the
    /// next reader of the same pipe or file. 0 for a whole line, 1 at the
    /// end of input (the names still get what came before it).
    fn read_builtin(&mut self, names: &[&str], raw: bool) -> i32 {
        let names: Vec<&str> = if names.is_empty() {
            alloc::vec!["REPLY"]
        } else {
            names.to_vec()
        };
        let mut line = Vec::new();
        let mut escaped = false;
        let mut status = 1;
        let mut byte = [0u8; 1];
        while let Ok(1) = sys::read(0, &mut byte) {
            let c = char::from(byte[0]);
            if escaped {
                escaped = false;
                if c != '\n' {
                    line.push((c, true));
                }
            } else if c == '\\' && !raw {
                escaped = true;
            } else if c == '\n' {
                status = 0;
                break;
            } else {
                line.push((c, false));
            }
        }
        let ifs = self.vars.get("IFS").cloned();
        let ifs = ifs.as_deref().unwrap_or(" \t\n");
        for (name, value) in names.iter().zip(split_fields(&line, ifs, names.len())) {
            self.vars.insert(name.to_string(), value);
        }
        status
    }

    /// `wait [PID...]`: for the given children, or for every child; the
    /// last one's status.
    fn wait_builtin(&mut self, pids: &[&str]) -> i32 {
        if pids.is_empty() {
            while sys::wait4(-1, 0).is_ok() {}
            self.finished.clear();
            return 0;
        }
        let mut status = 0;
        for pid in pids {
            let Ok(pid) = pid.parse::<u32>() else {
                eprintln!("wait: {pid}: not a pid");
                return 2;
            };
            status = match self.finished.remove(&pid) {
                Some(raw) => decode(raw),
                None => sys::waitpid(pid as i32).map_or(127, decode),
            };
        }
        status
    }

    /// Collects background jobs that have ended, so none stays a zombie,
    /// keeping their statuses for `wait`.
    fn reap(&mut self) {
        while let Ok((pid, status)) = sys::wait4(-1, WNOHANG) {
            if pid == 0 {
                break;
            }
            self.finished.insert(pid, status);
        }
    }
}

/// Puts back the descriptors `redirect` replaced, last first.
fn restore(saved: Vec<(i32, Option<i32>)>) {
    for (fd, copy) in saved.into_iter().rev() {
        match copy {
            Some(copy) => {
                let _ = sys::dup2(copy, fd);
                let _ = sys::close(copy);
            }
            None => {
                let _ = sys::close(fd);
            }
        }
    }
}

fn close_all(pipes: &[(i32, i32)]) {
    for &(r, w) in pipes {
        let _ = sys::close(r);
        let _ = sys::close(w);
    }
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "cd" | "exit" | "help" | ":" | "test" | "[" | "export" | "unset" | "wait" | "read"
    )
}

/// `read`'s split of `line` (each character with whether a backslash
/// quoted it) into `count` fields at the characters of `ifs`, as POSIX's
/// field splitting does: white space in `ifs` around a field is dropped and
/// a run of it is one separator, each other `ifs` character ends a field
/// (so `a::b` has an empty field between), and the last field is the rest
/// of the line without the white space at its end. Fields past the line's
/// are empty.
fn split_fields(line: &[(char, bool)], ifs: &str, count: usize) -> Vec<String> {
    let is_sep = |&(c, quoted): &(char, bool)| !quoted && ifs.contains(c);
    let is_white =
        |&(c, quoted): &(char, bool)| !quoted && ifs.contains(c) && c.is_ascii_whitespace();
    let text = |chars: &[(char, bool)]| chars.iter().map(|&(c, _)| c).collect::<String>();
    let mut rest = line;
    // Leading white space, then the trailing white space, belong to no field.
    while rest.first().is_some_and(is_white) {
        rest = &rest[1..];
    }
    while rest.last().is_some_and(is_white) {
        rest = &rest[..rest.len() - 1];
    }
    let mut fields = Vec::new();
    while fields.len() + 1 < count && !rest.is_empty() {
        let end = rest.iter().position(is_sep).unwrap_or(rest.len());
        fields.push(text(&rest[..end]));
        rest = &rest[end..];
        // One separator: white space, at most one other IFS character,
        // and the white space after it.
        while rest.first().is_some_and(is_white) {
            rest = &rest[1..];
        }
        if rest.first().is_some_and(|c| is_sep(c) && !is_white(c)) {
            rest = &rest[1..];
            while rest.first().is_some_and(is_white) {
                rest = &rest[1..];
            }
        }
    }
    fields.push(text(rest));
    fields.resize(count, String::new());
    fields
}

/// Where a program name leads: itself if it has a `/`, else the first
/// directory of `$PATH` (here always /bin) that holds it.
fn program_path(name: &str, env: &[String]) -> String {
    if name.contains('/') {
        return String::from(name);
    }
    let path = env
        .iter()
        .find_map(|v| v.strip_prefix("PATH="))
        .unwrap_or("/bin");
    path.split(':')
        .map(|dir| format!("{}/{name}", if dir.is_empty() { "." } else { dir }))
        .find(|candidate| sys::stat(candidate).is_ok())
        .unwrap_or_else(|| format!("/bin/{name}"))
}

/// In a forked child: execs `argv` with `env`; never returns.
fn exec(argv: &[String], env: &[String]) -> ! {
    let path = program_path(&argv[0], env);
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let env: Vec<&str> = env.iter().map(String::as_str).collect();
    let e = sys::execve(&path, &args, &env);
    eprintln!("sh: {}: {}", argv[0], e.message());
    sys::exit(if e == Errno::ENOENT { 127 } else { 126 })
}

/// A wait status as `$?`: the exit code, or 128 + the signal.
fn decode(status: i32) -> i32 {
    match (sys::exited(status), sys::signaled(status)) {
        (Some(code), _) => code,
        (_, Some(sig)) => 128 + sig as i32,
        _ => 1,
    }
}

/// `test` and `[`: files (`-e -f -d -L -r -w -x -s`), strings (`-n -z =
/// !=`, one word: not empty), integers (`-eq -ne -lt -le -gt -ge`), and
/// `!` before any of them. 0 true, 1 false, 2 a wrong expression.
fn test(args: &[&str]) -> i32 {
    match args {
        ["!", rest @ ..] => match test(rest) {
            2 => 2,
            status => 1 - status,
        },
        [] => 1,
        [word] => i32::from(word.is_empty()),
        [op, operand] => {
            let file = sys::stat(operand).ok();
            let is = |mask: u32| file.is_some_and(|st| st.st_mode & 0o170000 == mask);
            let truth = match *op {
                "-n" => !operand.is_empty(),
                "-z" => operand.is_empty(),
                "-e" => file.is_some(),
                "-f" => is(0o100000),
                "-d" => is(0o040000),
                "-s" => file.is_some_and(|st| st.st_size > 0),
                "-L" | "-h" => {
                    sys::lstat(operand).is_ok_and(|st| st.st_mode & 0o170000 == 0o120000)
                }
                "-r" => sys::access(operand, abi::types::R_OK).is_ok(),
                "-w" => sys::access(operand, abi::types::W_OK).is_ok(),
                "-x" => sys::access(operand, abi::types::X_OK).is_ok(),
                _ => {
                    eprintln!("test: {op}: unknown operator");
                    return 2;
                }
            };
            i32::from(!truth)
        }
        [left, op, right] => {
            let truth = match *op {
                "=" => left == right,
                "!=" => left != right,
                _ => {
                    let (Ok(a), Ok(b)) = (left.parse::<i64>(), right.parse::<i64>()) else {
                        eprintln!("test: integer expected");
                        return 2;
                    };
                    match *op {
                        "-eq" => a == b,
                        "-ne" => a != b,
                        "-lt" => a < b,
                        "-le" => a <= b,
                        "-gt" => a > b,
                        "-ge" => a >= b,
                        _ => {
                            eprintln!("test: {op}: unknown operator");
                            return 2;
                        }
                    }
                }
            };
            i32::from(!truth)
        }
        _ => {
            eprintln!("test: too many arguments");
            2
        }
    }
}

fn help() {
    println!("built-ins: cd [DIR], exit [STATUS], help, test/[ EXPR ], :, export, unset, wait,");
    println!("           read [-r] NAME...");
    println!("syntax: CMD ARGS, a | b, < in, > out, >> out, 2>&1, a ; b, a &, a && b, a || b,");
    println!("        {{ a; b; }}, ( a; b ), if/elif/else/fi, while/until ... do ... done,");
    println!("        for NAME in WORDS; do ... done, $NAME $? $$ $! $1, 'quotes', # comments");
    println!("programs: ls /bin");
    println!("keys: Ctrl-C interrupts the running command, Ctrl-D ends input");
}

/// Takes the console: a process group of its own, in the foreground.
fn start_job_control() {
    let me = sys::getpid();
    let taken = signal::setpgid(0, 0).and_then(|()| signal::tcsetpgrp(0, me));
    if taken.is_ok() {
        for s in [abi::signal::SIGINT, abi::signal::SIGQUIT] {
            // The line being typed is dropped; a fresh prompt follows.
            let _ = signal::sigaction(s, Handler::Simple(user::lineedit::on_interrupt), 0, 0);
        }
        JOB_CONTROL.store(true, Ordering::Relaxed);
    }
}

/// Prints a failed or killed command's status (a raw wait status).
fn report(name: &str, status: i32) {
    match (sys::exited(status), sys::signaled(status)) {
        (Some(0), _) => {}
        (Some(code), _) => eprintln!("[{name}: exit {code}]"),
        (_, Some(sig)) => eprintln!("[{name}: killed by {}]", libc_lite::signal::name(sig)),
        _ => {}
    }
}

/// Runs `text` if it is complete: `Ok(true)` when it ran (or was wrong and
/// reported), `Ok(false)` when it needs more lines, `Err` on `exit`.
fn run_text(shell: &mut Shell, text: &str) -> Result<bool, Exit> {
    match parse::parse(text) {
        Ok(list) => {
            shell.reap();
            shell.list(&list, false)?;
            Ok(true)
        }
        Err(parse::Error::Incomplete) => Ok(false),
        Err(parse::Error::Syntax(e)) => {
            eprintln!("sh: {e}");
            shell.status = 2;
            Ok(true)
        }
    }
}

fn prompt(more: bool) -> String {
    if more {
        return String::from("> ");
    }
    let mut cwd = [0u8; 256];
    format!("{} $ ", sys::getcwd(&mut cwd).unwrap_or("?"))
}

/// The interactive loop: lines from the line editor (history, arrow keys).
fn run_terminal(shell: &mut Shell) -> i32 {
    let mut editor = user::lineedit::LineEditor::default();
    let mut pending = String::new();
    loop {
        match editor.read_line(&prompt(!pending.is_empty())) {
            Ok(Some(line)) => {
                pending.push_str(&line);
                pending.push('\n');
                match run_text(shell, &pending) {
                    Ok(true) => pending.clear(),
                    Ok(false) => {}
                    Err(Exit(code)) => return code,
                }
            }
            Ok(None) => return shell.status,
            Err(e) => {
                eprintln!("sh: read: {}", e.message());
                return 1;
            }
        }
    }
}

/// Reads commands from `fd` (a script, or a terminal the line editor
/// cannot drive), a line at a time, running each command once complete.
fn run_fd(shell: &mut Shell, fd: i32, interactive: bool) -> i32 {
    let mut pending: Vec<u8> = Vec::new();
    // The lines read but not yet a complete command.
    let mut command = String::new();
    let mut buf = [0u8; 512];
    if interactive {
        print!("{}", prompt(false));
    }
    loop {
        while let Some(nl) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=nl).collect();
            command.push_str(&String::from_utf8_lossy(&line));
            match run_text(shell, &command) {
                Ok(true) => command.clear(),
                Ok(false) => {}
                Err(Exit(code)) => return code,
            }
            if interactive && !pending.contains(&b'\n') {
                print!("{}", prompt(!command.is_empty()));
            }
        }
        match sys::read(fd, &mut buf) {
            Ok(0) => {
                command.push_str(&String::from_utf8_lossy(&pending));
                if !command.trim().is_empty() {
                    match parse::parse(&command) {
                        Err(parse::Error::Incomplete) => {
                            eprintln!("sh: unexpected end of file");
                            shell.status = 2;
                        }
                        _ => {
                            if let Err(Exit(code)) = run_text(shell, &command) {
                                return code;
                            }
                        }
                    }
                }
                if interactive {
                    println!();
                }
                return shell.status;
            }
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(Errno::EINTR) => {
                if interactive {
                    pending.clear();
                    command.clear();
                }
            }
            Err(e) => {
                eprintln!("sh: read: {}", e.message());
                return 1;
            }
        }
    }
}

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().collect();
    let owned = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match args.as_slice() {
        // `sh -c LINE [NAME [ARGS...]]`: NAME is $0, as POSIX says.
        [sh, "-c", line, rest @ ..] => {
            let params = if rest.is_empty() {
                owned(&[sh])
            } else {
                owned(rest)
            };
            let mut shell = Shell::new(params);
            match parse::parse(line) {
                Ok(list) => match shell.list(&list, false) {
                    Ok(()) => shell.status,
                    Err(Exit(code)) => code,
                },
                Err(parse::Error::Incomplete) => {
                    eprintln!("sh: unexpected end of input");
                    2
                }
                Err(parse::Error::Syntax(e)) => {
                    eprintln!("sh: {e}");
                    2
                }
            }
        }
        [_, script, ..] => match sys::open(script, O_RDONLY, 0) {
            Ok(fd) => run_fd(&mut Shell::new(owned(&args[1..])), fd, false),
            Err(e) => {
                eprintln!("sh: {script}: {}", e.message());
                127
            }
        },
        _ => {
            println!(
                "profkern shell: type 'help' for help, 'ls /bin' for programs, 'exit' to power off"
            );
            let mut shell = Shell::new(owned(&args[..1]));
            start_job_control();
            if user::lineedit::LineEditor::usable() {
                run_terminal(&mut shell)
            } else {
                run_fd(&mut shell, 0, true)
            }
        }
    }
}
