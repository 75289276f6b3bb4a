//! /bin/ps: the process table (pid, parent, group, state, threads, user and
//! system ticks of all its threads, whether profil is on, name).
#![no_std]
#![no_main]
use abi::types::{PROC_RUNNABLE, PROC_RUNNING, PROC_SLEEPING, PROC_STOPPED, ProcInfo};
use libc_lite::{eprintln, println, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    let mut rows = [ProcInfo::default(); 64];
    let n = match sys::proclist(&mut rows) {
        Ok(n) => n.min(rows.len()),
        Err(e) => {
            eprintln!("ps: {}", e.message());
            return 1;
        }
    };
    println!("  PID  PPID  PGID STATE    THR   UTICKS   STICKS PROF NAME");
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
        println!(
            "{:>5} {:>5} {:>5} {:<8} {:>3} {:>8} {:>8} {:<4} {name}",
            p.pid, p.ppid, p.pgid, state, p.threads, p.user_ticks, p.system_ticks, prof
        );
    }
    0
}
