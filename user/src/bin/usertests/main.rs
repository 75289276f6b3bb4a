//! /bin/usertests: the kernel checked from the outside, as xv6's usertests.
//!
//! Every test runs in its own child process, so a test that crashes fails
//! alone. Each prints one line, `usertest: ok NAME` or `usertest: FAIL NAME:
//! why`, which `cargo xtask test` counts. The last test compares free
//! physical frames (plus what the kernel heap holds) with the count before
//! the first: every frame a test used must have come back.
//!
//! `usertests NAME...` runs only the named tests.

#![no_std]
#![no_main]

extern crate alloc;

use abi::sys as nr;
use abi::types::*;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use libc_lite::signal::Handler;
use libc_lite::{Errno, println, sys};

libc_lite::entry!(run);

mod cpus;
mod files;
mod ipc;
mod memory;
mod procs;
mod sockets;

use cpus::*;
use files::*;
use ipc::*;
use memory::*;
use procs::*;
use sockets::*;

use user::ensure;
use user::harness::{Outcome, Test, child_status, expect_err};
use user::probe::{open_files, send_descriptor};

/// A system call with raw arguments, for handing the kernel bad pointers.
fn raw(number: usize, args: &[usize]) -> Result<usize, Errno> {
    // SAFETY: these calls pass deliberately bad pointers; the kernel must
    // refuse them, which is what the tests check.
    Errno::from_return(unsafe { libc_lite::syscall::syscall(number, args) })
}

/// Frames in use by processes: everything but free frames and what the
/// kernel keeps for itself once grown (its heap and kernel page tables),
/// and not counting this process's own heap (its brk area grows as the
/// harness allocates, which is not a kernel leak) or its own page tables
/// (the heap, or a test's mapping, may reach where it needs a new one).
fn frames_in_use() -> u64 {
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static FIRST_BREAK: AtomicUsize = AtomicUsize::new(0);
    let brk = sys::brk(0);
    let first = match FIRST_BREAK.compare_exchange(0, brk, Relaxed, Relaxed) {
        Ok(_) => brk,
        Err(first) => first,
    };
    // The heap's pages come on demand: a page the break grew over but no
    // one touched has no frame. Each is written once (its own byte back),
    // so that the whole growth is the harness's, as the subtraction says.
    for page in (first.next_multiple_of(4096)..brk).step_by(4096) {
        let p = page as *mut u8;
        // SAFETY: below the break, inside this process's own heap; one
        // thread runs here, and the byte written is the one read.
        unsafe { p.write_volatile(p.read_volatile()) };
    }
    // Counted from the first break, wherever exec put the heap.
    let own_heap = (brk.div_ceil(4096) - first.div_ceil(4096)) as u64;
    let own_tables = own_table_frames();
    sys::kinfo().map_or(0, |k| k.frames_in_use() - own_heap - own_tables)
}

/// This process's page tables, from /proc/self/status's VmPTE line (0 if
/// it cannot be read: the count then shows the tables as in use). Read
/// into a buffer on the stack, so that reading grows no heap.
fn own_table_frames() -> u64 {
    let mut buf = [0u8; 2048];
    let Ok(fd) = sys::open("/proc/self/status", O_RDONLY, 0) else {
        return 0;
    };
    let mut len = 0;
    while let Ok(n @ 1..) = sys::read(fd, &mut buf[len..]) {
        len += n;
    }
    let _ = sys::close(fd);
    let text = core::str::from_utf8(&buf[..len]).unwrap_or("");
    text.lines()
        .find_map(|line| line.strip_prefix("VmPTE:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 4)
}

fn run() -> i32 {
    let before = frames_in_use();
    let (mut passed, mut failed) = user::harness::run("usertest", TESTS);
    let after = frames_in_use();
    let kept = if after == before {
        Ok(())
    } else {
        Err(format!("{before} frames in use before, {after} after"))
    };
    if kept.is_ok() {
        passed += 1;
    } else {
        failed += 1;
    }
    user::harness::verdict("usertest", "no_frames_lost", kept);
    let sound = sys::kcheck().map_err(|_| String::from("kcheck failed: see the console"));
    if sound.is_ok() {
        passed += 1;
    } else {
        failed += 1;
    }
    user::harness::verdict("usertest", "kernel_self_check", sound);
    println!("usertests: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}

/// Every test, in the order they run; each is named by its function.
const TESTS: &[Test] = user::tests![
    fork_exec_wait,
    exit_status_encoding,
    wait_nohang_and_echild,
    orphan_reparented_to_init,
    cow_isolation,
    pipe_transfers_data_and_eof,
    poll_sleeps_through_other_pipes,
    pipe_without_readers_is_epipe,
    files_create_write_read_rename_unlink,
    file_errors_match_linux,
    getdents_lists_a_directory,
    cwd_and_chdir,
    bad_pointers_are_efault,
    sockets_of_two_families_and_bad_pointers,
    descriptors_in_flight_are_closed,
    sysv_ipc_bad_pointers_lose_nothing,
    sysv_memory_and_undo_go_at_the_end,
    a_huge_sparse_file_has_no_blocks,
    a_write_far_past_memory_is_enospc,
    fd_exhaustion_is_emfile,
    fork_until_eagain,
    brk_until_enomem,
    mmap_munmap_mprotect,
    mmap_pages_come_on_demand,
    kernel_copies_fill_and_unshare_pages,
    mapped_file_stores_and_the_end_of_the_file,
    out_of_memory_at_a_fault_kills_only_the_toucher,
    a_reaped_child_has_given_back_every_frame,
    mremap_moves_grows_and_shrinks,
    munmap_of_everything_is_quick,
    private_pages_stay_private_after_mprotect,
    prot_none_pages_are_inaccessible,
    faults_kill_only_the_process,
    failed_exec_leaves_the_caller,
    randomize_va_space_moves_stacks_and_root_may_stop_it,
    kill_ends_a_blocked_child,
    nanosleep_sleeps,
    preemption_lets_others_run,
    ps_shows_the_cpu_each_process_runs_on,
    kbench_measures_and_refuses_bad_requests,
    the_kernel_profiles_itself_on_every_cpu,
    identity_and_time,
    proc_sys_says_what_the_kernel_does,
    root_names_the_machine,
    proc_bus_pci_lists_the_machine,
    termios_is_linux_sized,
    dev_tty_is_the_terminal,
    a_nonblocking_terminal_read_with_nothing_typed_is_eagain,
    extended_attributes_as_on_linux,
    nproc_limit_stops_fork,
    a_full_ramfs_is_enospc_and_loses_nothing,
    a_foreign_pointer_is_efault,
];
