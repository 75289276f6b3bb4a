//! /bin/prof PROGRAM [ARGS...]: runs a program under profil(2) and draws
//! where its time went, by function.
//!
//! The program runs in a child with `LIBC_LITE_PROFILE=FILE` in its
//! environment, which makes libc-lite's start-up profile its whole text and
//! write the histogram to FILE (gmon.out's format) when it exits: exec turns
//! profiling off (BSD), so the program has to start it itself, as V7's
//! `prof` needed programs built with `-p`. prof then reads the histogram
//! (`kcore::gmon`) and the program's symbol table (`kcore::symbols`) and
//! prints one bar per function, busiest first. Works for programs linked
//! with libc-lite that end by returning from main or calling exit().

#![no_std]
#![no_main]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use libc_lite::{Errno, eprintln, println, sys};

libc_lite::entry!(run);

/// Functions drawn; the rest are summed in one line.
const SHOWN: usize = 12;
const BAR: u64 = 40;

fn program_path(name: &str) -> String {
    if name.contains('/') {
        String::from(name)
    } else {
        format!("/bin/{name}")
    }
}

/// Runs the program with profiling asked for; returns its wait status.
fn run_profiled(path: &str, args: &[&str], out: &str) -> Result<i32, Errno> {
    let setting = format!("LIBC_LITE_PROFILE={out}");
    let pid = sys::fork()?;
    if pid == 0 {
        let e = sys::execve(path, args, &["PATH=/bin", "HOME=/", &setting]);
        eprintln!("prof: {path}: {}", e.message());
        sys::exit(127);
    }
    sys::waitpid(pid as i32)
}

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let Some(&name) = args.first() else {
        eprintln!("usage: prof PROGRAM [ARGS...]");
        return 2;
    };
    let path = program_path(name);
    let out = format!("/prof.{}.out", sys::getpid());
    let status = match run_profiled(&path, &args, &out) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("prof: {}", e.message());
            return 1;
        }
    };
    if let Some(code) = sys::exited(status).filter(|&c| c != 0) {
        println!("prof: {name} exited with {code}");
    } else if let Some(signal) = sys::signaled(status) {
        println!(
            "prof: {name} was killed by {}",
            libc_lite::signal::name(signal)
        );
    }
    let profile = sys::read_file(&out);
    let _ = sys::unlink(&out);
    let hist = match profile.map(|bytes| kcore::gmon::decode(&bytes)) {
        Ok(Ok(h)) => h,
        Ok(Err(why)) => {
            eprintln!("prof: the profile is damaged: {why:?}");
            return 1;
        }
        Err(e) => {
            eprintln!(
                "prof: {name} left no profile ({}): is it linked with libc-lite, and did it exit normally?",
                e.message()
            );
            return 1;
        }
    };
    let functions = kcore::symbols::functions(&sys::read_file(&path).unwrap_or_default());
    let mut per_function: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0;
    for (i, &count) in hist.bins.iter().enumerate().filter(|(_, c)| **c > 0) {
        let pc = hist.low_pc + i as u64 * kcore::gmon::BYTES_PER_BIN;
        let name = kcore::symbols::containing(&functions, pc).map_or("?", |s| s.name.as_str());
        *per_function.entry(name).or_default() += u64::from(count);
        total += u64::from(count);
    }
    let mut ranked: Vec<(&str, u64)> = per_function.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    println!(
        "prof: {name}: {total} samples at {} Hz ({:.2} s), text {:#x}..{:#x}",
        hist.prof_rate,
        total as f64 / f64::from(hist.prof_rate.max(1)),
        hist.low_pc,
        hist.high_pc
    );
    let top = ranked.first().map_or(1, |r| r.1).max(1);
    for &(function, count) in ranked.iter().take(SHOWN) {
        let bar: String = "#".repeat((count * BAR).div_ceil(top) as usize);
        println!(
            "  {:>5.1}% {count:>6}  {bar:<40}  {function}",
            count as f64 * 100.0 / total.max(1) as f64
        );
    }
    if ranked.len() > SHOWN {
        let rest: u64 = ranked[SHOWN..].iter().map(|r| r.1).sum();
        println!(
            "  {:>5.1}% {rest:>6}  ({} more functions)",
            rest as f64 * 100.0 / total.max(1) as f64,
            ranked.len() - SHOWN
        );
    }
    0
}
