//! Birth and death: the first process, fork, exit, wait4.
//!
//! fork copies the parent's address space copy-on-write, shares its open
//! files, and gives the child a kernel stack whose saved trap frame is the
//! parent's with rax = 0, so both return from the same fork, each with its
//! own answer. exit frees what it can at once (memory, files), hands children
//! to init, and leaves a zombie holding the wait status and the kernel stack,
//! which the parent's wait4 frees. When init itself exits the machine powers
//! off with init's status, which is how `cargo xtask run -- PROGRAM` ends.

use abi::Errno;
use abi::types::{SIGCHLD, WALL, WCONTINUED, WNOHANG, WUNTRACED};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use x86_64::instructions::interrupts;

use super::sched::{self, Chan};
use super::{INIT_PID, MAX_PROCS, Pid, Process, State, TABLE, current, exec};
use crate::arch::trap::TrapFrame;
use crate::fs::file::{FdTable, Kind, OpenFile};
use crate::mm::kstack::KernelStack;
use crate::mm::uaccess;
use crate::signal;

/// Creates process 1 running `path` with `args`, its stdin, stdout and stderr
/// on the console.
pub fn spawn_init(path: &str, args: &[String]) -> Result<(), Errno> {
    let mut argv = Vec::from([String::from(path)]);
    argv.extend_from_slice(args);
    let envp = [String::from("PATH=/bin"), String::from("HOME=/")];
    let image = exec::load(path, &argv, &envp)?;
    let console = crate::fs::ramfs::lookup("/dev/console")?;
    let mut files = FdTable::default();
    for _ in 0..3 {
        files.install(
            OpenFile::new(Kind::Node(console.clone()), abi::types::O_RDWR),
            false,
        )?;
    }
    let frame = exec::user_entry_frame(image.entry, image.stack_pointer);
    let kstack = KernelStack::with_first_frame(&frame).ok_or(Errno::ENOMEM)?;
    let mut table = TABLE.lock();
    let pid = table.alloc_pid();
    assert_eq!(pid, INIT_PID, "init is the first process");
    table.procs.insert(
        pid,
        Box::new(new_process(
            pid,
            0,
            exec::program_name(path),
            image.mem,
            kstack,
            files,
            String::from("/"),
        )),
    );
    Ok(())
}

fn new_process(
    pid: Pid,
    ppid: Pid,
    name: String,
    mem: super::vm::UserMemory,
    kstack: KernelStack,
    files: FdTable,
    cwd: String,
) -> Process {
    Process {
        pid,
        ppid,
        pgid: INIT_PID,
        name,
        state: State::Runnable,
        mem: Some(mem),
        kstack,
        files,
        cwd,
        umask: 0o022,
        user_ticks: 0,
        system_ticks: 0,
        children_ticks: (0, 0),
        slice_left: 0,
        sig: crate::signal::Signals::default(),
        wake_at: 0,
        fs_base: 0,
        prof: crate::profil::Profile::default(),
        fpu: crate::arch::fpu::FpuState::initial(),
    }
}

/// fork(2): the child returns 0 from the same call.
///
/// A group signal (a Ctrl-C, `kill(-pgid)`) sent while a fork is under way
/// must reach the child as well as the parent, or the child outlives the
/// job it belongs to. So, in steps: a signal already pending restarts the
/// call after its delivery (the child is not made yet); from then on, group
/// signals to the parent are also kept for the child (`Signals::fork_begins`,
/// `signal::send_to_many`); and the child gets them when it enters the table.
pub fn fork(tf: &TrapFrame) -> Result<usize, Errno> {
    if TABLE.lock().procs.len() >= MAX_PROCS {
        return Err(Errno::EAGAIN);
    }
    current(|p| {
        if p.sig.interrupts() {
            return Err(signal::ERESTARTNOINTR);
        }
        p.sig.fork_begins();
        Ok(())
    })?;
    let child = copy_current(tf);
    // Out of memory or out of slots: the parent stops keeping group signals.
    let abandon = |e: Errno| {
        current(|p| drop(p.sig.fork_ends()));
        Err(e)
    };
    let child = match child {
        Ok(child) => child,
        Err(e) => return abandon(e),
    };
    let mut table = TABLE.lock();
    if table.procs.len() >= MAX_PROCS {
        drop(table);
        drop(child); // frees its memory and stack outside the table's lock
        return abandon(Errno::EAGAIN);
    }
    let pid = table.alloc_pid();
    let mut child = child;
    child.pid = pid;
    let parent = table.current_mut().expect("the forking process is current");
    let arrived: Vec<(u32, signal::Origin)> = parent.sig.fork_ends().collect();
    for (sig, origin) in arrived {
        signal::send(&mut child, sig, origin);
    }
    table.procs.insert(pid, child);
    Ok(pid as usize)
}

/// A copy of the current process for a child of fork (its pid is set when
/// it enters the table): copy-on-write memory, the same open files, cwd,
/// umask, handlers and mask, profil regions, FPU state and thread pointer,
/// and a kernel stack whose saved frame is the parent's with rax = 0.
fn copy_current(tf: &TrapFrame) -> Result<Box<Process>, Errno> {
    let mut child_frame = *tf;
    child_frame.rax = 0;
    let kstack = KernelStack::with_first_frame(&child_frame).ok_or(Errno::ENOMEM)?;
    current(|p| {
        let mem = p
            .mem
            .as_ref()
            .expect("a running process has memory")
            .fork()?;
        // The live registers are the parent's; the child starts with a copy.
        p.fpu.save();
        let mut child = new_process(
            0,
            p.pid,
            p.name.clone(),
            mem,
            kstack,
            p.files.clone(),
            p.cwd.clone(),
        );
        child.pgid = p.pgid;
        child.umask = p.umask;
        child.sig = p.sig.for_child();
        child.prof = p.prof.for_child();
        child.fpu = p.fpu.clone();
        child.fs_base = p.fs_base;
        Ok(Box::new(child))
    })
}

/// Ends the current process with wait status `status`.
///
/// Steps: stop profiling and let go of memory and files at once; init's
/// exit powers the machine off; otherwise, with the table locked, give the
/// children to init, hang up the process groups that leaves orphaned with a
/// stopped member, become a zombie and tell the parent; then give up the
/// CPU for good. The zombie keeps its kernel stack until wait4 reaps it.
pub fn exit(status: i32) -> ! {
    let (pid, files, mem) = current(|p| {
        p.prof.stop(abi::types::PROF_STOPPED_BY_EXIT);
        (p.pid, p.files.take_all(), p.mem.take())
    });
    drop(files);
    drop(mem);
    if pid == INIT_PID {
        power_off_after_init(status);
    }
    interrupts::disable();
    let mut table = TABLE.lock();
    let (zombie_orphans, orphaned_groups) = give_children_to_init(&mut table, pid);
    hang_up_orphaned_groups(&mut table, &orphaned_groups);
    let me = table.procs.get_mut(&pid).expect("current is in the table");
    me.state = State::Zombie { status };
    let ppid = me.ppid;
    if let Some(parent) = table.procs.get_mut(&ppid) {
        signal::send(parent, SIGCHLD, signal::Origin::child(pid, status));
    }
    drop(table);
    sched::wakeup(Chan::Child(ppid));
    if zombie_orphans {
        sched::wakeup(Chan::Child(INIT_PID));
    }
    sched::switch_to_scheduler();
    unreachable!("a zombie was scheduled");
}

/// Makes init the parent of `pid`'s children. Returns whether one of them
/// is a zombie already (init must be woken to reap it) and their groups.
fn give_children_to_init(table: &mut super::Table, pid: Pid) -> (bool, Vec<Pid>) {
    let mut zombie_orphans = false;
    let mut groups = Vec::new();
    for p in table.procs.values_mut().filter(|p| p.ppid == pid) {
        p.ppid = INIT_PID;
        zombie_orphans |= matches!(p.state, State::Zombie { .. });
        groups.push(p.pgid);
    }
    (zombie_orphans, groups)
}

/// POSIX: a process group left without a parent outside it, with a stopped
/// member, gets SIGHUP and SIGCONT, or nobody could ever continue it and its
/// memory would be held for good. (Simplified: any of these groups that has
/// a stopped member.)
fn hang_up_orphaned_groups(table: &mut super::Table, groups: &[Pid]) {
    for &group in groups {
        let stopped = table
            .procs
            .values()
            .any(|p| p.pgid == group && p.state == State::Stopped);
        if stopped {
            for p in table.procs.values_mut().filter(|p| p.pgid == group) {
                signal::send_to_many(p, abi::signal::SIGHUP, signal::Origin::kernel());
                signal::send_to_many(p, abi::signal::SIGCONT, signal::Origin::kernel());
            }
        }
    }
}

fn power_off_after_init(status: i32) -> ! {
    // As a shell reports it: the exit code, or 128 + the signal.
    let code = match abi::types::wait_term_signal(status) {
        Some(signal) => 128 + signal as i32,
        None => abi::types::wait_exit_code(status).unwrap_or(0),
    };
    crate::info!("init exited with status {code}; powering off");
    crate::fs::export::export_all();
    crate::arch::power::exit(code.min(126) as u8)
}

/// wait4(2), without rusage.
pub fn wait4(want: i32, status_ptr: u64, options: u32) -> Result<usize, Errno> {
    const KNOWN: u32 = WNOHANG | WUNTRACED | WCONTINUED | WALL;
    if options & !KNOWN != 0 {
        return Err(Errno::EINVAL);
    }
    if status_ptr != 0 {
        // Checked before reaping, so a bad pointer loses no child.
        uaccess::check_range(status_ptr, 4, true)?;
    }
    let (me, my_group) = current(|p| (p.pid, p.pgid));
    let is_wanted = |p: &Process| {
        p.ppid == me
            && match want {
                -1 => true,
                0 => p.pgid == my_group,
                n if n < 0 => p.pgid == n.unsigned_abs(),
                n => p.pid == n as Pid,
            }
    };
    let reaped = sched::wait_event(Chan::Child(me), || {
        let mut table = TABLE.lock();
        if !table.procs.values().any(|p| is_wanted(p)) {
            return Some(Err(Errno::ECHILD));
        }
        let zombie = table
            .procs
            .values()
            .find(|p| is_wanted(p) && matches!(p.state, State::Zombie { .. }));
        if let Some(pid) = zombie.map(|p| p.pid) {
            return Some(Ok(table.procs.remove(&pid)));
        }
        if options & WNOHANG != 0 {
            Some(Ok(None))
        } else {
            None
        }
    })??;
    let Some(child) = reaped else { return Ok(0) };
    let State::Zombie { status } = child.state else {
        unreachable!("reaped a zombie")
    };
    current(|p| {
        p.children_ticks.0 += child.user_ticks + child.children_ticks.0;
        p.children_ticks.1 += child.system_ticks + child.children_ticks.1;
    });
    if status_ptr != 0 {
        uaccess::write(status_ptr, &status)?;
    }
    Ok(child.pid as usize) // dropping `child` frees its kernel stack
}
