//! Birth and death: the first process, clone (fork, vfork, threads), exit,
//! exit_group, the wait of wait4 and waitid.
//!
//! clone makes one of two things (kcore::thread::classify_clone decides
//! which, and refuses everything else):
//!
//! - a *process*: the caller's memory copied copy-on-write (or, for vfork
//!   with CLONE_VM, lent: the child runs in it while the parent waits), its
//!   open files shared, and one thread whose kernel stack holds the caller's
//!   trap frame with rax = 0, so both return from the same call, each with
//!   its own answer;
//! - a *thread* of the caller's process: a kernel stack with the same frame
//!   (on the stack the caller gave), its own FS base (CLONE_SETTLS) and
//!   mask, everything else shared.
//!
//! A thread that ends (`exit_thread`) clears its tid word and wakes a
//! joiner, releases its robust mutexes, and is freed by the scheduler once
//! it has switched away for the last time. The last thread of a process
//! also ends the process: memory and files go at once, children go to
//! init, and a zombie holds the wait status until the parent's wait4.
//! `exit_group` (and every fatal signal) ends all threads first. When init
//! itself exits the machine powers off with init's status, which is how
//! `cargo xtask run -- PROGRAM` ends.

use abi::Errno;
use abi::types::SIGCHLD;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use kcore::thread::{CloneKind, CloneRequest, classify_clone};
use kcore::wait::{Options, Report, Which};
use x86_64::instructions::interrupts;

use super::sched::{self, Chan};
use super::{
    INIT_PID, MAX_THREADS, Pid, Process, State, TABLE, Thread, Tid, current, current_both,
    current_thread, exec, futex,
};
use crate::arch::trap::TrapFrame;
use crate::fs::file::{FdTable, Files, Kind, OpenFile};
use crate::mm::kstack::KernelStack;
use crate::mm::paging::Space;
use crate::mm::{USER_TOP, uaccess};
use crate::signal;

/// Creates process 1 running `path` with `args`, its stdin, stdout and stderr
/// on the console.
pub fn spawn_init(path: &str, args: &[String]) -> Result<(), Errno> {
    let argv: Vec<Vec<u8>> = core::iter::once(path)
        .chain(args.iter().map(String::as_str))
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let envp = [b"PATH=/bin".to_vec(), b"HOME=/".to_vec()];
    let image = exec::load(
        path,
        &argv,
        &envp,
        kcore::rlimit::STACK_DEFAULT,
        &kcore::cred::Cred::root(),
    )?;
    let console = crate::fs::ramfs::lookup("/dev/console")?;
    let mut files = FdTable::default();
    for _ in 0..3 {
        files.install(
            &OpenFile::new(
                Kind::Node(console.clone()),
                abi::types::O_RDWR,
                Some("/dev/console"),
            ),
            false,
            3,
        )?;
    }
    let frame = exec::user_entry_frame(image.entry, image.stack_pointer);
    let kstack = KernelStack::with_first_frame(&frame).ok_or(Errno::ENOMEM)?;
    let mut table = TABLE.lock();
    let pid = table.alloc_pid();
    assert_eq!(pid, INIT_PID, "init is the first process");
    let files = Files::new(files);
    let mut process = new_process(pid, 0, exec::program_name(path), files, String::from("/"));
    process.mem = Some(image.mem);
    process.exe = String::from(path);
    process.cmdline = exec::cmdline(&argv);
    table.procs.insert(pid, Box::new(process));
    let mut thread = Thread::new(pid, pid, kstack);
    thread.state = State::Runnable;
    table.threads.insert(pid, Box::new(thread));
    Ok(())
}

/// A process with one live thread to come, no memory yet.
pub(super) fn new_process(pid: Pid, ppid: Pid, name: String, files: Files, cwd: String) -> Process {
    Process {
        pid,
        ppid,
        pgid: INIT_PID,
        sid: INIT_PID,
        name,
        exe: String::new(),
        cmdline: Vec::new(),
        start_tick: crate::clock::ticks(),
        mem: None,
        borrowed_from: None,
        vfork_parent: None,
        files,
        cwd,
        umask: 0o022,
        personality: 0,
        limits: kcore::rlimit::defaults(MAX_THREADS as u64),
        cred: Arc::new(kcore::cred::Cred::root()),
        user_ticks: 0,
        system_ticks: 0,
        children_ticks: (0, 0),
        switches: Default::default(),
        children_switches: Default::default(),
        sig: crate::signal::Signals::default(),
        prof: crate::profil::Profile::default(),
        live_threads: 1,
        unfreed_threads: 1,
        stopped: false,
        change: None,
        group_exit: None,
        zombie: None,
        autoreap: false,
        exit_signal: SIGCHLD,
        pdeath_signal: 0,
        watch: None,
    }
}

/// The user addresses clone(2) was given.
#[derive(Clone, Copy)]
pub struct CloneArgs {
    pub flags: u64,
    /// The child's stack pointer, 0 for the caller's.
    pub stack: u64,
    pub parent_tid: u64,
    pub child_tid: u64,
    pub tls: u64,
}

/// clone(2), and fork and vfork through it. Returns the child's tid (its
/// pid for a process) to the caller; the child returns 0.
///
/// The user words it writes (CLONE_PARENT_SETTID, CLONE_CHILD_SETTID) are
/// checked before anything is made, and written before the child may run.
pub fn clone(tf: &TrapFrame, args: CloneArgs) -> Result<usize, Errno> {
    let request = classify_clone(args.flags)?;
    if request.set_tls && args.tls >= USER_TOP {
        return Err(Errno::EPERM); // as arch_prctl(ARCH_SET_FS) says
    }
    if args.stack >= USER_TOP {
        return Err(Errno::EINVAL);
    }
    if request.parent_settid {
        uaccess::check_range(args.parent_tid, 4, true)?;
    }
    let mut frame = *tf;
    frame.rax = 0;
    if args.stack != 0 {
        frame.rsp = args.stack;
    }
    match request.kind {
        CloneKind::Thread => {
            if request.child_settid {
                uaccess::check_range(args.child_tid, 4, true)?;
            }
            clone_thread(&frame, &request, &args)
        }
        CloneKind::Process {
            exit_signal,
            vfork,
            share_memory,
            share_files,
        } => clone_process(
            &frame,
            &request,
            &args,
            exit_signal,
            vfork,
            share_memory,
            share_files,
        ),
    }
}

/// A new thread of the current process.
fn clone_thread(
    frame: &TrapFrame,
    request: &CloneRequest,
    args: &CloneArgs,
) -> Result<usize, Errno> {
    let kstack = KernelStack::with_first_frame(frame).ok_or(Errno::ENOMEM)?;
    let tid = {
        let mut table = TABLE.lock();
        table.may_add_task()?;
        let tid = table.alloc_id();
        let (t, p) = table.current_both().expect("a thread is cloning");
        if p.group_exit.is_some() {
            return Err(Errno::EAGAIN); // the process is ending
        }
        // The live registers are the caller's; the thread starts with a copy.
        t.fpu.save();
        let mut thread = Thread::new(tid, p.pid, kstack);
        thread.fpu = t.fpu.clone();
        thread.nice = t.scheduling.child_nice(t.nice);
        thread.scheduling = t.scheduling.for_child();
        thread.timer_slack = t.timer_slack;
        thread.tsc_faults = t.tsc_faults;
        thread.allowed_cpus = t.allowed_cpus;
        thread.fs_base = if request.set_tls { args.tls } else { t.fs_base };
        thread.gs_base = t.gs_base;
        // Linux: a thread starts without the caller's alternate stack.
        thread.sig = t.sig.for_child(false);
        if request.child_cleartid {
            thread.clear_child_tid = args.child_tid;
        }
        p.live_threads += 1;
        p.unfreed_threads += 1;
        table.threads.insert(tid, Box::new(thread));
        tid
    };
    write_ids(tid, request, args, None);
    make_runnable(tid);
    Ok(tid as usize)
}

/// The ids clone promised to write: at `parent_tid` in the caller's memory,
/// at `child_tid` in the child's (the copy that process `copy_of` has, or
/// the caller's when the memory is shared). Written before the child may
/// run. The addresses were checked before the child was made; a write that
/// fails anyway (another thread unmapped the page) is ignored, as Linux
/// ignores it.
fn write_ids(tid: Tid, request: &CloneRequest, args: &CloneArgs, copy_of: Option<Pid>) {
    if request.parent_settid {
        let _ = uaccess::write(args.parent_tid, &tid);
    }
    if request.child_settid {
        let _ = match copy_of {
            Some(pid) => TABLE
                .lock()
                .procs
                .get(&pid)
                .and_then(|p| p.mem.as_ref())
                .map_or(Err(Errno::EFAULT), |m| {
                    m.space.write_user(args.child_tid, &tid.to_le_bytes())
                }),
            None => uaccess::write(args.child_tid, &tid),
        };
    }
}

fn make_runnable(tid: Tid) {
    if let Some(t) = TABLE.lock().threads.get_mut(&tid)
        && t.state == State::New
    {
        t.make_runnable();
    }
}

/// A new process: fork, or vfork (the caller waits for the child's exec or
/// exit).
///
/// A group signal (a Ctrl-C, `kill(-pgid)`) sent while a fork is under way
/// must reach the child as well as the parent, or the child outlives the
/// job it belongs to. So, in steps: a signal already pending restarts the
/// call after its delivery (the child is not made yet); from then on, group
/// signals to the parent are also kept for the child (`Signals::fork_begins`,
/// `signal::send_to_many`); and the child gets them when it enters the table.
fn clone_process(
    frame: &TrapFrame,
    request: &CloneRequest,
    args: &CloneArgs,
    exit_signal: u32,
    vfork: bool,
    share_memory: bool,
    share_files: bool,
) -> Result<usize, Errno> {
    TABLE.lock().may_add_process()?;
    current_both(|t, p| {
        if signal::interrupts(t, p) {
            return Err(signal::ERESTARTNOINTR);
        }
        p.sig.fork_begins();
        Ok(())
    })?;
    // Memory is lent only by a process with one thread: the others of a
    // threaded one would go on running in it.
    let lend = share_memory && current(|p| p.live_threads == 1);
    let made = copy_current(frame, lend, share_files);
    // Out of memory or out of slots: the parent stops keeping group signals.
    let abandon = |e: Errno, child: Option<(Box<Process>, Box<Thread>)>| {
        if let Some((mut child, _)) = child {
            if let Some(mem) = child.mem.take().filter(|_| lend) {
                current(|p| p.mem = Some(mem)); // the lent memory comes back
            }
            drop(child); // frees the copy's memory and the stack
        }
        current(|p| drop(p.sig.fork_ends()));
        Err(e)
    };
    let (mut child, mut thread) = match made {
        Ok(made) => made,
        Err(e) => return abandon(e, None),
    };
    let mut table = TABLE.lock();
    if let Err(e) = table.may_add_process() {
        drop(table);
        return abandon(e, Some((child, thread)));
    }
    let pid = table.alloc_pid();
    child.pid = pid;
    child.exit_signal = exit_signal;
    thread.tid = pid;
    thread.pid = pid;
    if request.child_cleartid {
        thread.clear_child_tid = args.child_tid;
    }
    if request.set_tls {
        thread.fs_base = args.tls;
    }
    let parent_pid = {
        let parent = table.current_mut().expect("the forking process is current");
        if vfork {
            child.vfork_parent = Some(parent.pid);
        }
        if lend {
            child.borrowed_from = Some(parent.pid);
        }
        parent.pid
    };
    let arrived: Vec<(u32, signal::Origin)> = table
        .procs
        .get_mut(&parent_pid)
        .map(|p| p.sig.fork_ends().collect())
        .unwrap_or_default();
    table.procs.insert(pid, child);
    table.threads.insert(pid, thread);
    for (sig, origin) in arrived {
        signal::send(&mut table, pid, sig, origin);
    }
    drop(table);
    // The child's memory is the caller's when lent; else its own copy.
    write_ids(pid, request, args, (!lend).then_some(pid));
    make_runnable(pid);
    if vfork {
        sched::wait_uninterruptible(Chan::Vfork(pid), || {
            TABLE
                .lock()
                .procs
                .get(&pid)
                .is_none_or(|c| c.vfork_parent.is_none())
        });
    }
    Ok(pid as usize)
}

/// A copy of the current process and thread for a child of fork (its ids
/// are set when it enters the table): memory copied copy-on-write (or the
/// caller's own, taken, when `lend`), the same open files, cwd, umask,
/// handlers, mask and alternate stack, profil regions, FPU state and thread
/// pointer, and a kernel stack holding `frame`. The open files are a copy
/// of the table, or the table itself when `share_files` (CLONE_FILES).
fn copy_current(
    frame: &TrapFrame,
    lend: bool,
    share_files: bool,
) -> Result<(Box<Process>, Box<Thread>), Errno> {
    let kstack = KernelStack::with_first_frame(frame).ok_or(Errno::ENOMEM)?;
    // The copy-on-write walk comes before the process table is locked (its
    // lock keeps interrupts off): it takes the page-table lock for one
    // level-1 table at a time, and so fork keeps interrupts off for one
    // table's work at most, however large the parent. The space is the
    // caller's own, loaded, and cannot be freed while the caller runs
    // (`Space::current`). A sibling thread's mmap, munmap or brk during
    // the walk may reach the child in part: an area without its pages
    // (they fill on demand, anonymous ones with zeros) or pages without
    // their area (freed with the child's tables). Linux makes it all or
    // nothing with the parent's mmap_lock; here that race is the
    // program's, and costs the kernel nothing.
    let copied = if lend {
        None
    } else {
        let space = Space::current().fork_cow().ok_or(Errno::ENOMEM)?;
        super::vm::wipe_marked(&space);
        Some(space)
    };
    current_both(|t, p| {
        let mem = match copied {
            None => p.mem.take().expect("a running process has memory"),
            Some(space) => {
                let parent = p.mem.as_ref().expect("a running process has memory");
                debug_assert!(parent.space.is_active(), "fork copied the loaded space");
                parent.forked(space)
            }
        };
        // The live registers are the parent's; the child starts with a copy.
        t.fpu.save();
        let files = if share_files {
            p.files.share()
        } else {
            p.files.copy()
        };
        let mut child = new_process(0, p.pid, p.name.clone(), files, p.cwd.clone());
        child.mem = Some(mem);
        child.pgid = p.pgid;
        child.sid = p.sid;
        child.exe = p.exe.clone();
        child.cmdline = p.cmdline.clone();
        child.umask = p.umask;
        child.personality = p.personality;
        child.limits = p.limits;
        child.cred = p.cred.clone();
        child.sig = p.sig.for_child();
        child.prof = p.prof.for_child();
        let mut thread = Thread::new(0, 0, kstack);
        thread.nice = t.scheduling.child_nice(t.nice);
        thread.scheduling = t.scheduling.for_child();
        thread.timer_slack = t.timer_slack;
        thread.tsc_faults = t.tsc_faults;
        thread.allowed_cpus = t.allowed_cpus;
        thread.sig = t.sig.for_child(true);
        thread.fpu = t.fpu.clone();
        thread.fs_base = t.fs_base;
        thread.gs_base = t.gs_base;
        Ok((Box::new(child), Box::new(thread)))
    })
}

/// exit(2): ends the calling thread; the last thread's `status` is the
/// process's wait status (unless exit_group or a signal set one).
///
/// Steps: clear the tid word and wake a joiner, release robust mutexes
/// (both need the thread's memory, so they come first); if this is the
/// last thread, end the process (`end_process`); then become Dead and give
/// up the CPU for good. The scheduler frees the thread.
pub fn exit_thread(status: i32) -> ! {
    let (clear_child_tid, robust_list, tid) = current_thread(|t| {
        futex::exiting(t.tid);
        (
            core::mem::take(&mut t.clear_child_tid),
            core::mem::take(&mut t.robust_list),
            t.tid,
        )
    });
    if robust_list != 0 {
        futex::release_robust_list(robust_list, tid);
    }
    if clear_child_tid != 0 && uaccess::write(clear_child_tid, &0u32).is_ok() {
        // The word was just written, so it is there to be named.
        let _ = futex::wake(clear_child_tid, 1, abi::types::FUTEX_BITSET_MATCH_ANY);
    }
    current_thread(|t| t.prof.clear());
    let (pid, last) = current(|p| {
        p.live_threads -= 1;
        (p.pid, p.live_threads == 0)
    });
    if last {
        end_process(status);
    }
    interrupts::disable();
    {
        let mut table = TABLE.lock();
        if let Some((t, _)) = table.current_both() {
            t.state = State::Dead;
        }
        // In the same hold: a PI lock's waiter either saw this thread
        // alive and is told now, or sees it dead.
        futex::owner_gone(&mut table, tid);
    }
    sched::wakeup(Chan::ThreadExit(pid));
    sched::switch_to_scheduler();
    unreachable!("a dead thread was scheduled");
}

/// exit_group(2), and the end of every fatal signal: every other thread of
/// the process gets SIGKILL, then the caller exits. The first status given
/// is the process's.
pub fn exit_group(status: i32) -> ! {
    start_group_exit(status);
    exit_thread(status)
}

/// The first half of `exit_group`: unless another thread began the
/// group's exit already (then this returns false), `status` becomes the
/// process's and every other thread gets SIGKILL. A core dump comes
/// between the two halves, so the memory it copies stops changing.
pub fn start_group_exit(status: i32) -> bool {
    let mut table = TABLE.lock();
    let (t, p) = table.current_both().expect("a thread is exiting");
    let (me, pid) = (t.tid, p.pid);
    // Whoever set it first has already told the others.
    if p.group_exit.is_some() {
        return false;
    }
    p.group_exit = Some(status);
    signal::kill_other_threads(&mut table, pid, me);
    true
}

/// Ends the current process, whose last thread is exiting.
///
/// Steps: stop profiling and let go of memory (or give lent memory back)
/// and files at once, and a session leader of its controlling terminal;
/// init's exit powers the machine off; otherwise, with
/// the table locked, give the children to init, hang up the process groups
/// that leaves orphaned with a stopped member, become a zombie, release a
/// vfork parent and tell the parent, and the pollers of its pidfds.
fn end_process(status: i32) {
    let (pid, files, mem, group_exit) = current(|p| {
        p.prof.stop(abi::types::PROF_STOPPED_BY_EXIT);
        (p.pid, p.files.release(), p.mem.take(), p.group_exit)
    });
    let status = group_exit.unwrap_or(status);
    let mem = give_back_borrowed(pid, mem);
    drop(files);
    crate::fs::socket::collect_rings();
    crate::fs::lock::release_process(pid);
    crate::ipc::process_exited(pid);
    drop(mem);
    crate::fs::pty::process_ended(pid);
    if pid == INIT_PID {
        power_off_after_init(status);
    }
    interrupts::disable();
    let mut table = TABLE.lock();
    let (zombie_orphans, orphaned_groups) = give_children_to_init(&mut table, pid);
    hang_up_orphaned_groups(&mut table, &orphaned_groups);
    let me = table.procs.get_mut(&pid).expect("current is in the table");
    me.zombie = Some(status);
    me.stopped = false;
    let (ppid, exit_signal) = (me.ppid, me.exit_signal);
    let ignored = table.procs.get(&ppid).is_some_and(|parent| {
        let action = parent.sig.action(SIGCHLD);
        action.handler == abi::signal::SIG_IGN || action.flags & abi::signal::SA_NOCLDWAIT != 0
    });
    if ignored && exit_signal == SIGCHLD {
        table
            .procs
            .get_mut(&pid)
            .expect("current is in the table")
            .autoreap = true;
    }
    if exit_signal != 0 {
        signal::send(
            &mut table,
            ppid,
            exit_signal,
            signal::Origin::child(pid, status),
        );
    }
    let watch = table.procs.get(&pid).and_then(|p| p.watch.clone());
    drop(table);
    release_vfork_parent(pid);
    if let Some(watch) = watch {
        watch.ended();
    }
    sched::wakeup(Chan::Child(ppid));
    if zombie_orphans {
        sched::wakeup(Chan::Child(INIT_PID));
    }
}

/// If process `pid` runs in memory lent by its vfork parent, `mem` goes
/// back to the parent and None is returned; else `mem` is returned, to be
/// dropped or replaced by the caller.
pub fn give_back_borrowed(
    pid: Pid,
    mem: Option<super::vm::UserMemory>,
) -> Option<super::vm::UserMemory> {
    let mut table = TABLE.lock();
    let lender = table
        .procs
        .get_mut(&pid)
        .and_then(|p| p.borrowed_from.take());
    match lender.and_then(|parent| table.procs.get_mut(&parent)) {
        Some(parent) => {
            parent.mem = mem;
            None
        }
        None => mem,
    }
}

/// The vfork child `pid` has exec'd or exited: its parent runs on.
pub fn release_vfork_parent(pid: Pid) {
    let released = TABLE
        .lock()
        .procs
        .get_mut(&pid)
        .and_then(|p| p.vfork_parent.take())
        .is_some();
    if released {
        sched::wakeup(Chan::Vfork(pid));
    }
}

/// Makes init the parent of `pid`'s children, sending each its parent-death
/// signal if it set one. Returns whether one of them is a zombie already
/// (init must be woken to reap it) and their groups.
fn give_children_to_init(table: &mut super::Table, pid: Pid) -> (bool, Vec<Pid>) {
    let mut zombie_orphans = false;
    let mut groups = Vec::new();
    let mut told = Vec::new();
    for p in table.procs.values_mut().filter(|p| p.ppid == pid) {
        p.ppid = INIT_PID;
        zombie_orphans |= p.is_zombie();
        groups.push(p.pgid);
        if p.pdeath_signal != 0 && !p.is_zombie() {
            told.push((p.pid, p.pdeath_signal));
        }
    }
    // prctl(PR_SET_PDEATHSIG): the child asked to hear of its parent's end.
    for (child, sig) in told {
        signal::send(table, child, sig, signal::Origin::kernel());
    }
    (zombie_orphans, groups)
}

/// POSIX: a process group left without a parent outside it, with a stopped
/// member, gets SIGHUP and SIGCONT, or nobody could ever continue it and its
/// memory would be held for good. (Simplified: any of these groups that has
/// a stopped member.)
fn hang_up_orphaned_groups(table: &mut super::Table, groups: &[Pid]) {
    for &group in groups {
        let stopped = table.procs.values().any(|p| p.pgid == group && p.stopped);
        if stopped {
            for pid in signal::pids_where(table, |p| p.pgid == group) {
                signal::send_to_many(table, pid, abi::signal::SIGHUP, signal::Origin::kernel());
                signal::send_to_many(table, pid, abi::signal::SIGCONT, signal::Origin::kernel());
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
    // What the disks were promised, and what they were not, reaches them
    // before the power goes (init's own context: the disk may sleep).
    if let Err(e) = crate::fs::mount::sync_all() {
        crate::warn!("power-off: a disk failed to sync: {e:?}");
    }
    crate::arch::trap::log_trap_counts();
    crate::fs::export::export_all();
    crate::arch::power::exit(code.min(126) as u8)
}

/// What a wait found: the child, what it reports, and (for a child that
/// ended and was reaped) its CPU time, counted into the caller's children's
/// time.
pub struct Waited {
    pub pid: Pid,
    pub uid: u32,
    pub report: Report,
    /// User and system ticks of the child and its reaped children.
    pub ticks: (u64, u64),
    /// Context switches of the child and its reaped children.
    pub switches: super::Switches,
}

/// The wait of wait4(2) and waitid(2): sleeps until a child that `which`
/// names has a change `options` asks for (kcore::wait), and answers it;
/// Ok(None) for WNOHANG when none has. ECHILD when no such child exists.
/// An ended child is reaped unless WNOWAIT; a stop or continue is
/// reported once. It sees processes, never their threads.
pub fn wait(which: Which, options: Options) -> Result<Option<Waited>, Errno> {
    let (me, my_group) = current(|p| (p.pid, p.pgid));
    let is_wanted = |p: &Process| {
        p.ppid == me
            && options.sees(p.exit_signal)
            && match which {
                Which::Any => true,
                Which::CallersGroup => p.pgid == my_group,
                Which::Group(group) => p.pgid == group,
                Which::Pid(pid) => p.pid == pid,
            }
    };
    // A zombie whose last thread's stack is not yet freed is reported once
    // it is: the scheduler wakes this channel then.
    let ready = |p: &Process| !p.is_zombie() || p.unfreed_threads == 0;
    let take = || {
        let mut table = TABLE.lock();
        if !table.procs.values().any(|p| is_wanted(p)) {
            return Some(Err(Errno::ECHILD));
        }
        let found = table.procs.values().find_map(|p| {
            let report = Report::of(&options, p.zombie, p.change)?;
            (is_wanted(p) && ready(p)).then_some((p.pid, report))
        });
        if let Some((pid, report)) = found {
            let child = table.procs.get_mut(&pid).expect("found in the table");
            let mut waited = Waited {
                pid,
                uid: child.cred.ruid,
                report,
                ticks: (
                    child.user_ticks + child.children_ticks.0,
                    child.system_ticks + child.children_ticks.1,
                ),
                switches: child.switches,
            };
            waited.switches.add(child.children_switches);
            if !options.keep {
                match report {
                    Report::Ended(_) => {
                        table.procs.remove(&pid);
                        let parent = table
                            .procs
                            .get_mut(&me)
                            .expect("the caller is in the table");
                        parent.children_ticks.0 += waited.ticks.0;
                        parent.children_ticks.1 += waited.ticks.1;
                        parent.children_switches.add(waited.switches);
                    }
                    Report::Changed(_) => child.change = None,
                }
            }
            return Some(Ok(Some(waited)));
        }
        // Even WNOHANG waits for a zombie whose last stack is on its way
        // out (its thread is Dead; its CPU frees it next): a SIGCHLD
        // handler that was told of the child must find it.
        let freeing = options.exited && table.procs.values().any(|p| is_wanted(p) && p.is_zombie());
        if options.no_hang && !freeing {
            Some(Ok(None))
        } else {
            None
        }
    };
    match sched::wait_event(Chan::Child(me), take) {
        Ok(found) => found,
        // A child that has exited is reported, not the signal, as Linux's
        // wait looks for zombies before it looks at signals: the SIGCHLD
        // its exit sent may come while its last stack is still being freed
        // on another CPU, and a handler without SA_RESTART then made
        // wait4 fail with EINTR (sigtests-4cpus). The free is the next
        // thing that CPU does, so this wait is short and not interruptible.
        // (If another thread of this process reaps it first, the signal
        // is reported after all.)
        Err(interrupted) => {
            let exited = || {
                options.exited
                    && TABLE
                        .lock()
                        .procs
                        .values()
                        .any(|p| is_wanted(p) && p.is_zombie())
            };
            let mut outcome = None;
            sched::wait_uninterruptible(Chan::Child(me), || {
                outcome = match take() {
                    Some(done) => Some(done),
                    None if !exited() => Some(Err(interrupted)),
                    None => None,
                };
                outcome.is_some()
            });
            outcome.expect("the wait ends with an outcome")
        }
    }
}
