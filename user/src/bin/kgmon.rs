//! /bin/kgmon: control of the kernel's own profile, after 4.4BSD's
//! kgmon(8) (the calls: kgmon(2), kernel/src/syscall/kgmon.rs).
//!
//! ```text
//! kgmon            say whether the kernel is profiling itself
//! kgmon -b         begin (or resume) profiling
//! kgmon -h         halt it
//! kgmon -r         reset: zero the histograms
//! kgmon -p [FILE]  dump the profile as a gmon.out (default ./gmon.out),
//!                  for gprof with the kernel's ELF (cargo xtask kprof)
//! kgmon -w MS      the kernel's test workload: MS milliseconds in two
//!                  kernel functions, three parts to one (tests)
//! kgmon -i         how long locks kept interrupts off while profiling
//!                  ran, by rank of lock (the histogram charges that time
//!                  to whoever turned them back on)
//! ```
//!
//! Flags are done in one order whatever order they are given in: halt,
//! dump (so `-h -p` dumps a profile that no longer moves), the
//! interrupts-off times, reset (after the dump, as kgmon(8) says of
//! `-p -r`), begin, the workload. The state
//! is said last, as kgmon(8) ends with "kernel profiling is running."

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::*;
use alloc::string::String;
use alloc::vec;
use libc_lite::{eprintln, println, sys};

libc_lite::entry!(run);

#[derive(Default)]
struct Asked {
    begin: bool,
    halt: bool,
    reset: bool,
    dump: Option<String>,
    work_ms: Option<u64>,
    interrupts_off: bool,
}

fn usage() -> i32 {
    eprintln!("usage: kgmon [-b] [-h] [-r] [-p [FILE]] [-i] [-w MS]");
    2
}

fn parse() -> Result<Asked, String> {
    let mut asked = Asked::default();
    let mut args = libc_lite::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        match arg {
            "-b" => asked.begin = true,
            "-h" => asked.halt = true,
            "-r" => asked.reset = true,
            "-i" => asked.interrupts_off = true,
            "-p" => {
                let file = args.next_if(|a| !a.starts_with('-')).unwrap_or("gmon.out");
                asked.dump = Some(file.into());
            }
            "-w" => {
                let ms = args.next().ok_or("-w needs milliseconds")?;
                let ms = ms
                    .parse()
                    .map_err(|_| alloc::format!("-w {ms}: not a number of milliseconds"))?;
                asked.work_ms = Some(ms);
            }
            other => return Err(alloc::format!("unknown argument {other}")),
        }
    }
    Ok(asked)
}

/// Prints the kernel's interrupts-off totals (`KGMON_IRQS_OFF`): each
/// rank's time, and its share of the CPU time profiled.
fn interrupts_off() -> Result<(), String> {
    let why = |e: libc_lite::Errno| alloc::format!("interrupts off: {}", e.message());
    let len = sys::kgmon_into(KGMON_IRQS_OFF, &mut []).map_err(why)?;
    // Room for a line more: the totals move while profiling runs.
    let mut text = vec![0u8; len + 64];
    let len = sys::kgmon_into(KGMON_IRQS_OFF, &mut text).map_err(why)?;
    let text = core::str::from_utf8(&text[..len]).map_err(|_| "interrupts off: not text")?;
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace().skip(1);
    let profiled_ns: u64 = first.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let cpus: u64 = first.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let cpu_ns = (profiled_ns * cpus).max(1);
    println!(
        "kgmon: interrupts off under locks, in {}.{:03} s profiled on {cpus} CPU(s):",
        profiled_ns / 1_000_000_000,
        profiled_ns / 1_000_000 % 1000
    );
    for line in lines {
        let mut words = line.split_whitespace();
        let (Some(rank), Some(ns)) = (
            words.next(),
            words.next().and_then(|n| n.parse::<u64>().ok()),
        ) else {
            continue;
        };
        let hundredths = ns * 10_000 / cpu_ns;
        println!(
            "  {rank:<12} {:>7}.{:03} ms  {:>3}.{:02}%",
            ns / 1_000_000,
            ns / 1000 % 1000,
            hundredths / 100,
            hundredths % 100
        );
    }
    Ok(())
}

/// The largest profile a dump tries to hold: the histogram of a few MiB
/// of text and every CPU's arcs, with room.
const MAX_PROFILE: usize = 256 << 20;

/// Writes the kernel's profile to `path`.
fn dump(path: &str) -> Result<usize, String> {
    let why = |what: &str, e: libc_lite::Errno| alloc::format!("{what}: {}", e.message());
    // The profiled kernel's call graph grows while it runs: a new arc
    // between the two calls makes the first length short (ERANGE), so the
    // buffer has a quarter to spare, and grows again after an ERANGE.
    let mut room = sys::kgmon_extract(&mut []).map_err(|e| why("the profile", e))?;
    let (profile, len) = loop {
        room += room / 4;
        let mut profile = vec![0u8; room];
        match sys::kgmon_extract(&mut profile) {
            Ok(len) => break (profile, len),
            Err(libc_lite::Errno::ERANGE) if room < MAX_PROFILE => continue,
            Err(e) => return Err(why("the profile", e)),
        }
    };
    let fd = sys::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644).map_err(|e| why(path, e))?;
    let written = sys::write_all(fd, &profile[..len]).map_err(|e| why(path, e));
    let _ = sys::close(fd);
    written.map(|()| len)
}

fn run() -> i32 {
    let asked = match parse() {
        Ok(asked) => asked,
        Err(why) => {
            eprintln!("kgmon: {why}");
            return usage();
        }
    };
    let fail = |what: &str, e: libc_lite::Errno| {
        eprintln!("kgmon: {what}: {}", e.message());
        1
    };
    if asked.halt
        && let Err(e) = sys::kgmon(KGMON_STOP, 0)
    {
        return fail("halt", e);
    }
    if let Some(path) = &asked.dump {
        match dump(path) {
            Ok(len) => println!("kgmon: {len} bytes of profile in {path}"),
            Err(why) => {
                eprintln!("kgmon: {why}");
                return 1;
            }
        }
    }
    if asked.interrupts_off
        && let Err(why) = interrupts_off()
    {
        eprintln!("kgmon: {why}");
        return 1;
    }
    if asked.reset
        && let Err(e) = sys::kgmon(KGMON_RESET, 0)
    {
        return fail("reset", e);
    }
    if asked.begin
        && let Err(e) = sys::kgmon(KGMON_START, 0)
        && e != libc_lite::Errno::EALREADY
    {
        return fail("begin", e);
    }
    if let Some(ms) = asked.work_ms
        && let Err(e) = sys::kgmon(KGMON_SPIN, ms)
    {
        return fail("workload", e);
    }
    // A dump from a call graph that ran out of room says so (kgmon(8)
    // has no such line; gprof would otherwise show too few calls).
    if asked.dump.is_some()
        && let Ok(lost) = sys::kgmon(KGMON_LOST_ARCS, 0)
        && lost > 0
    {
        eprintln!("kgmon: {lost} calls on new arcs found the kernel's arc tables full");
    }
    match sys::kgmon(KGMON_STATE, 0) {
        Ok(KGMON_RUNNING) => println!("kgmon: kernel profiling is running."),
        Ok(KGMON_OFF) => println!("kgmon: kernel profiling is off."),
        Ok(_) => println!("kgmon: kernel profiling was never started."),
        Err(e) => return fail("state", e),
    }
    0
}
