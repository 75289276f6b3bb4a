//! /bin/sh: a small Unix shell.
//!
//! Runs programs with arguments, pipelines (`a | b | c`), redirections
//! (`< in`, `> out`, `>> out`), sequences (`a ; b`), single and double
//! quotes, `NAME=value` before a command (added to its environment), and the
//! built-ins `cd`, `exit` and `help`. A command that fails or
//! is killed gets its status printed. `sh -c 'COMMANDS'` runs one line;
//! `sh FILE` runs a script.
//!
//! Interactive, it does job control the Unix way: each pipeline runs in a
//! process group of its own, made the console's foreground group while it
//! runs, so Ctrl-C (SIGINT from the console) reaches the pipeline and not the
//! shell; the shell catches SIGINT itself, which ends a half-typed line.
//! At a terminal it edits lines itself (`user::lineedit`): arrow keys and a
//! history.

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::{O_APPEND, O_CREAT, O_RDONLY, O_TRUNC, O_WRONLY};
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use libc_lite::signal::{self, Handler};
use libc_lite::{Errno, eprintln, print, println, sys};

/// Whether this shell runs pipelines as foreground process groups.
static JOB_CONTROL: AtomicBool = AtomicBool::new(false);

libc_lite::entry!(run);

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Pipe,
    Semi,
    In,
    Out,
    Append,
}

fn tokenize(line: &str) -> Result<Vec<Token>, &'static str> {
    let mut tokens = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            '#' => break,
            '|' | ';' | '<' => {
                chars.next();
                tokens.push(match c {
                    '|' => Token::Pipe,
                    ';' => Token::Semi,
                    _ => Token::In,
                });
            }
            '>' => {
                chars.next();
                if chars.peek() == Some(&'>') {
                    chars.next();
                    tokens.push(Token::Append);
                } else {
                    tokens.push(Token::Out);
                }
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    match c {
                        ' ' | '\t' | '|' | ';' | '<' | '>' => break,
                        '\'' | '"' => {
                            chars.next();
                            loop {
                                match chars.next() {
                                    Some(q) if q == c => break,
                                    Some(ch) => word.push(ch),
                                    None => return Err("unterminated quote"),
                                }
                            }
                        }
                        _ => {
                            word.push(c);
                            chars.next();
                        }
                    }
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(tokens)
}

#[derive(Default, Debug)]
struct Command {
    /// `NAME=value` words before the program name: added to its environment.
    env: Vec<String>,
    argv: Vec<String>,
    input: Option<String>,
    output: Option<(String, bool)>,
}

/// Splits tokens into pipelines (separated by `;`) of commands.
fn parse(tokens: Vec<Token>) -> Result<Vec<Vec<Command>>, &'static str> {
    let mut pipelines = Vec::new();
    let mut pipeline = Vec::new();
    let mut cmd = Command::default();
    let mut iter = tokens.into_iter();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(w) if cmd.argv.is_empty() && is_assignment(&w) => cmd.env.push(w),
            Token::Word(w) => cmd.argv.push(w),
            Token::In | Token::Out | Token::Append => {
                let Some(Token::Word(file)) = iter.next() else {
                    return Err("redirection needs a file name");
                };
                match token {
                    Token::In => cmd.input = Some(file),
                    _ => cmd.output = Some((file, token == Token::Append)),
                }
            }
            Token::Pipe => {
                if cmd.argv.is_empty() {
                    return Err("empty command in pipeline");
                }
                pipeline.push(core::mem::take(&mut cmd));
            }
            Token::Semi => {
                if !cmd.argv.is_empty() {
                    pipeline.push(core::mem::take(&mut cmd));
                } else if !pipeline.is_empty() {
                    return Err("empty command in pipeline");
                }
                if !pipeline.is_empty() {
                    pipelines.push(core::mem::take(&mut pipeline));
                }
                cmd = Command::default(); // assignments alone do not carry over
            }
        }
    }
    if !cmd.argv.is_empty() {
        pipeline.push(cmd);
    } else if !pipeline.is_empty() {
        return Err("empty command in pipeline");
    }
    if !pipeline.is_empty() {
        pipelines.push(pipeline);
    }
    Ok(pipelines)
}

/// `NAME=value` with a shell variable name.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn program_path(name: &str) -> String {
    if name.contains('/') {
        String::from(name)
    } else {
        alloc::format!("/bin/{name}")
    }
}

/// In a forked child: set up descriptors and exec; never returns.
fn exec_child(cmd: &Command, stdin: Option<i32>, stdout: Option<i32>, pipes: &[(i32, i32)]) -> ! {
    let fail = |what: &str, e: Errno| -> ! {
        eprintln!("sh: {what}: {}", e.message());
        sys::exit(127)
    };
    if let Some(fd) = stdin {
        sys::dup2(fd, 0).unwrap_or_else(|e| fail("dup2", e));
    }
    if let Some(fd) = stdout {
        sys::dup2(fd, 1).unwrap_or_else(|e| fail("dup2", e));
    }
    for &(r, w) in pipes {
        let _ = sys::close(r);
        let _ = sys::close(w);
    }
    if let Some(file) = &cmd.input {
        let fd = sys::open(file, O_RDONLY, 0).unwrap_or_else(|e| fail(file, e));
        sys::dup2(fd, 0).unwrap_or_else(|e| fail("dup2", e));
        let _ = sys::close(fd);
    }
    if let Some((file, append)) = &cmd.output {
        let mode = if *append { O_APPEND } else { O_TRUNC };
        let fd =
            sys::open(file, O_WRONLY | O_CREAT | mode, 0o644).unwrap_or_else(|e| fail(file, e));
        sys::dup2(fd, 1).unwrap_or_else(|e| fail("dup2", e));
        let _ = sys::close(fd);
    }
    let args: Vec<&str> = cmd.argv.iter().map(String::as_str).collect();
    let mut env: Vec<&str> = Vec::from(["PATH=/bin", "HOME=/"]);
    env.extend(cmd.env.iter().map(String::as_str));
    let e = sys::execve(&program_path(&cmd.argv[0]), &args, &env);
    eprintln!("sh: {}: {}", cmd.argv[0], e.message());
    sys::exit(if e == Errno::ENOENT { 127 } else { 126 })
}

/// Runs one pipeline; returns the exit code of its last command.
fn run_pipeline(pipeline: &[Command], last_status: &mut i32) -> Option<i32> {
    if let [cmd] = pipeline {
        match cmd.argv[0].as_str() {
            "cd" => {
                let dir = cmd.argv.get(1).map_or("/", String::as_str);
                *last_status = match sys::chdir(dir) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("cd: {dir}: {}", e.message());
                        1
                    }
                };
                return None;
            }
            "exit" => {
                return Some(
                    cmd.argv
                        .get(1)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(*last_status),
                );
            }
            "help" => {
                println!("built-ins: cd [DIR], exit [STATUS], help");
                println!(
                    "syntax: CMD ARGS, a | b, < in, > out, >> out, a ; b, 'quotes', # comments"
                );
                println!("programs: ls /bin");
                println!("keys: Ctrl-C interrupts the running command, Ctrl-D ends input");
                *last_status = 0;
                return None;
            }
            _ => {}
        }
    }
    let mut pipes = Vec::new();
    for _ in 1..pipeline.len() {
        match sys::pipe() {
            Ok(p) => pipes.push(p),
            Err(e) => {
                eprintln!("sh: pipe: {}", e.message());
                for (r, w) in pipes {
                    let _ = sys::close(r);
                    let _ = sys::close(w);
                }
                *last_status = 1;
                return None;
            }
        }
    }
    let jobs = JOB_CONTROL.load(Ordering::Relaxed);
    let mut children = Vec::new();
    for (i, cmd) in pipeline.iter().enumerate() {
        let stdin = (i > 0).then(|| pipes[i - 1].0);
        let stdout = (i + 1 < pipeline.len()).then(|| pipes[i].1);
        let group = children.first().map_or(0, |&pid| pid as i32);
        match sys::fork() {
            Ok(0) => {
                if jobs {
                    // The child takes the terminal for its job itself, as
                    // the parent does below: whichever runs first, the job
                    // is in the foreground before any of it runs. (Left to
                    // the parent alone, a child scheduled first could print
                    // and be sent Ctrl-C while the shell still held the
                    // terminal: the SIGINT went to the shell, the job ran on.)
                    let _ = signal::setpgid(0, group);
                    let leader = if group == 0 {
                        sys::getpid()
                    } else {
                        group as u32
                    };
                    let _ = signal::tcsetpgrp(0, leader);
                }
                exec_child(cmd, stdin, stdout, &pipes)
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
    for (r, w) in pipes {
        let _ = sys::close(r);
        let _ = sys::close(w);
    }
    if let (true, Some(&leader)) = (jobs, children.first()) {
        let _ = signal::tcsetpgrp(0, leader);
    }
    let last = children.last().copied();
    for pid in children {
        let status = sys::waitpid(pid as i32).unwrap_or(0);
        if Some(pid) == last {
            *last_status = report(&pipeline[pipeline.len() - 1].argv[0], status);
        }
    }
    if jobs {
        let _ = signal::tcsetpgrp(0, sys::getpid());
    }
    None
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

/// Prints a failed or killed command's status; returns its exit code.
fn report(name: &str, status: i32) -> i32 {
    match (sys::exited(status), sys::signaled(status)) {
        (Some(0), _) => 0,
        (Some(code), _) => {
            eprintln!("[{name}: exit {code}]");
            code
        }
        (_, Some(sig)) => {
            eprintln!("[{name}: killed by {}]", libc_lite::signal::name(sig));
            128 + sig as i32
        }
        _ => 1,
    }
}

/// Runs one input line; Some(code) if it was `exit`.
fn run_line(line: &str, status: &mut i32) -> Option<i32> {
    let pipelines = match tokenize(line).and_then(parse) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sh: {e}");
            *status = 2;
            return None;
        }
    };
    for pipeline in &pipelines {
        if let Some(code) = run_pipeline(pipeline, status) {
            return Some(code);
        }
    }
    None
}

/// The interactive loop: lines from the line editor (history, arrow keys).
fn run_terminal() -> i32 {
    let mut editor = user::lineedit::LineEditor::default();
    let mut status = 0;
    loop {
        let mut cwd = [0u8; 256];
        let prompt = alloc::format!("{} $ ", sys::getcwd(&mut cwd).unwrap_or("?"));
        match editor.read_line(&prompt) {
            Ok(Some(line)) => {
                if let Some(code) = run_line(&line, &mut status) {
                    return code;
                }
            }
            Ok(None) => return status,
            Err(e) => {
                eprintln!("sh: read: {}", e.message());
                return 1;
            }
        }
    }
}

fn run_fd(fd: i32, interactive: bool) -> i32 {
    let mut status = 0;
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        if interactive && !pending.contains(&b'\n') {
            let mut cwd = [0u8; 256];
            print!("{} $ ", sys::getcwd(&mut cwd).unwrap_or("?"));
        }
        while let Some(nl) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=nl).collect();
            let text = core::str::from_utf8(&line[..nl]).unwrap_or("");
            if let Some(code) = run_line(text, &mut status) {
                return code;
            }
            if interactive && !pending.contains(&b'\n') {
                let mut cwd = [0u8; 256];
                print!("{} $ ", sys::getcwd(&mut cwd).unwrap_or("?"));
            }
        }
        match sys::read(fd, &mut buf) {
            Ok(0) => {
                if !pending.is_empty() {
                    let text = String::from_utf8_lossy(&pending).into_owned();
                    pending.clear();
                    if let Some(code) = run_line(&text, &mut status) {
                        return code;
                    }
                }
                if interactive {
                    println!();
                }
                return status;
            }
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(Errno::EINTR) => {
                if interactive {
                    pending.clear();
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
    match args.as_slice() {
        [_, "-c", line, ..] => {
            let mut status = 0;
            run_line(line, &mut status).unwrap_or(status)
        }
        [_, script, ..] => match sys::open(script, O_RDONLY, 0) {
            Ok(fd) => run_fd(fd, false),
            Err(e) => {
                eprintln!("sh: {script}: {}", e.message());
                127
            }
        },
        _ => {
            println!(
                "profkern shell: type 'help' for help, 'ls /bin' for programs, 'exit' to power off"
            );
            start_job_control();
            if user::lineedit::LineEditor::usable() {
                run_terminal()
            } else {
                run_fd(0, true)
            }
        }
    }
}
