//! /bin/ps: the process table (pid, parent, group, state, threads, the CPU
//! it runs or last ran on, user and system ticks of all its threads,
//! whether profil is on, name). `ps -T` adds a TID column and a row per
//! thread, the threads read from `/proc/PID/task` as Linux's ps reads them.
#![no_std]
#![no_main]
use abi::types::{PROC_NO_CPU, PROC_RUNNABLE, PROC_RUNNING, PROC_SLEEPING, PROC_STOPPED, ProcInfo};
extern crate alloc;
use libc_lite::{eprintln, println, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    // proclist says how many processes there are: a table that grew
    // since the buffer was made is asked for again, in a larger one.
    let mut rows = alloc::vec![ProcInfo::default(); 64];
    let n = loop {
        match sys::proclist(&mut rows) {
            Ok(n) if n > rows.len() => rows.resize(n + 16, ProcInfo::default()),
            Ok(n) => break n,
            Err(e) => {
                eprintln!("ps: {}", e.message());
                return 1;
            }
        }
    };
    let threads = match libc_lite::env::args().nth(1) {
        None => false,
        Some("-T") => true,
        Some(other) => {
            eprintln!("ps: unknown option '{other}' (ps, or ps -T for a row per thread)");
            return 2;
        }
    };
    let tid_head = if threads { "   TID" } else { "" };
    println!("  PID{tid_head}  PPID  PGID STATE    THR CPU   UTICKS   STICKS PROF NAME");
    for p in &rows[..n] {
        let state = match p.state {
            PROC_RUNNABLE => "runnable",
            PROC_RUNNING => "running",
            PROC_SLEEPING => "sleeping",
            PROC_STOPPED => "stopped",
            _ => "zombie",
        };
        let len = p.name.iter().position(|&b| b == 0).unwrap_or(p.name.len());
        let name = core::str::from_utf8(&p.name[..len]).unwrap_or("?");
        let prof = if p.profiling != 0 { "on" } else { "off" };
        let cpu = if p.cpu == PROC_NO_CPU {
            alloc::string::String::from("-")
        } else {
            alloc::format!("{}", p.cpu)
        };
        let rest = alloc::format!(
            "{:>5} {:>5} {:<8} {:>3} {:>3} {:>8} {:>8} {:<4} {name}",
            p.ppid,
            p.pgid,
            state,
            p.threads,
            cpu,
            p.user_ticks,
            p.system_ticks,
            prof
        );
        if !threads {
            println!("{:>5} {rest}", p.pid);
            continue;
        }
        // A zombie has no threads left; a process gone since the table
        // was read has no directory.
        let mut tids: alloc::vec::Vec<u32> =
            user::probe::dir_names(&alloc::format!("/proc/{}/task", p.pid))
                .unwrap_or_default()
                .iter()
                .filter_map(|t| t.parse().ok())
                .collect();
        tids.sort_unstable();
        if tids.is_empty() {
            println!("{:>5} {:>5} {rest}", p.pid, "-");
        }
        for tid in tids {
            println!("{:>5} {tid:>5} {rest}", p.pid);
        }
    }
    0
}
