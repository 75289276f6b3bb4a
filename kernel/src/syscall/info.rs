//! Time, identity and introspection calls.

use abi::Errno;
use abi::types::{
    CAP_SYS_NICE, CAP_SYS_TIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE,
    CLOCK_MONOTONIC_RAW, CLOCK_PROCESS_CPUTIME_ID, CLOCK_REALTIME, CLOCK_REALTIME_COARSE,
    CLOCK_TAI, CLOCK_THREAD_CPUTIME_ID, GETRANDOM_MAX, GRND_INSECURE, GRND_NONBLOCK, GRND_RANDOM,
    KInfo, ProcInfo, Timespec, Utsname,
};

use kcore::vdso::{Clock, Time};

use kcore::cpuclock::{self, Owner, Which};

use super::SysResult;
use crate::mm::uaccess;
use crate::proc::{TABLE, current};
use crate::sync::{IrqLock, Rank};
use crate::{clock, mm};

/// clock_gettime(2). The clocks the vDSO also answers come from the same
/// published state by the same arithmetic (clock.rs, `kcore::vdso`), so a
/// program gets the same time either way.
pub fn clock_gettime(clock_id: u32, ts: u64) -> SysResult {
    let time = match clock_id {
        // CPU time at the tick's resolution: all threads', or the caller's.
        CLOCK_PROCESS_CPUTIME_ID => cpu_time(Owner::Process(0), Which::Sched)?,
        CLOCK_THREAD_CPUTIME_ID => cpu_time(Owner::Thread(0), Which::Sched)?,
        _ => match cpuclock::decode(clock_id as i32) {
            Some((owner, which)) => cpu_time(owner, which)?,
            None => clock::now(Clock::from_id(clock_id).ok_or(Errno::EINVAL)?),
        },
    };
    uaccess::write(ts, &timespec(time))?;
    Ok(0)
}

/// A CPU-time clock's reading (`kcore::cpuclock`), at the tick's
/// resolution: a process's is all its threads' ticks (so far as they were
/// charged to it), a thread's its own; `Virt` counts user mode only.
/// EINVAL for no such process, or a thread of another process, as Linux's
/// `posix_cpu_clock_get`.
fn cpu_time(owner: Owner, which: Which) -> Result<Time, Errno> {
    let (pid, tid) = (
        crate::proc::current_pid() as u32,
        crate::proc::current_thread(|t| t.tid),
    );
    let table = TABLE.lock();
    let ticks = match owner {
        Owner::Process(id) => {
            let p = table
                .procs
                .get(&if id == 0 { pid } else { id })
                .ok_or(Errno::EINVAL)?;
            match which {
                Which::Virt => p.user_ticks,
                Which::Prof | Which::Sched => p.user_ticks + p.system_ticks,
            }
        }
        Owner::Thread(id) => {
            let t = table
                .threads
                .get(&if id == 0 { tid } else { id })
                .filter(|t| t.pid == pid)
                .ok_or(Errno::EINVAL)?;
            match which {
                Which::Virt => t.user_ticks,
                Which::Prof | Which::Sched => t.cpu_ticks,
            }
        }
    };
    Ok(Time::from_nanos(
        ticks * 1_000_000_000 / u64::from(clock::hz()),
    ))
}

fn timespec(time: Time) -> Timespec {
    Timespec {
        tv_sec: time.sec as i64,
        tv_nsec: time.nsec as i64,
    }
}

/// gettimeofday(2): the time, and a zeroed `struct timezone` (minutes
/// west of Greenwich, DST kind) where one is asked for: this kernel keeps
/// UTC, as Linux does unless settimeofday set a zone.
pub fn gettimeofday(tv: u64, tz: u64) -> SysResult {
    if tz != 0 {
        uaccess::write(tz, &[0i32; 2])?;
    }
    if tv != 0 {
        let now = clock::now(Clock::Realtime);
        uaccess::write(tv, &[now.sec as i64, (now.nsec / 1000) as i64])?;
    }
    Ok(0)
}

/// clock_settime(2): only the wall clock may be set (EINVAL for the
/// others), with nanoseconds inside a second and not to before the time
/// since boot (EINVAL), by a caller with CAP_SYS_TIME (EPERM); Linux's
/// checks, in Linux's order. Every process's vDSO sees the new time at
/// once.
pub fn clock_settime(clock_id: u32, ts: u64) -> SysResult {
    if clock_id != CLOCK_REALTIME {
        return Err(Errno::EINVAL);
    }
    let wanted: Timespec = uaccess::read(ts)?;
    set_wall(wanted.tv_sec, wanted.tv_nsec)
}

/// settimeofday(2): the wall clock in microseconds. A timezone is
/// checked (at most 15 hours from UTC, EINVAL) and not kept: this kernel
/// keeps UTC (Linux uses the zone only for FAT's times). Either pointer
/// may be null.
pub fn settimeofday(tv: u64, tz: u64) -> SysResult {
    let wall = match tv {
        0 => None,
        _ => {
            let [sec, usec]: [i64; 2] = uaccess::read(tv)?;
            if !(0..1_000_000).contains(&usec) {
                return Err(Errno::EINVAL);
            }
            Some((sec, usec * 1000))
        }
    };
    if tz != 0 {
        let [minutes_west, _dst]: [i32; 2] = uaccess::read(tz)?;
        if !(-15 * 60..=15 * 60).contains(&minutes_west) {
            return Err(Errno::EINVAL);
        }
    }
    match wall {
        Some((sec, nsec)) => set_wall(sec, nsec),
        None if crate::proc::cred().capable(CAP_SYS_TIME) => Ok(0),
        None => Err(Errno::EPERM),
    }
}

fn set_wall(sec: i64, nsec: i64) -> SysResult {
    // Linux's order: a time out of range before the privilege, a time
    // before boot (in `set_realtime`) after it.
    if !(0..kcore::vdso::SETTOD_SEC_MAX as i64).contains(&sec)
        || !(0..1_000_000_000).contains(&nsec)
    {
        return Err(Errno::EINVAL);
    }
    if !crate::proc::cred().capable(CAP_SYS_TIME) {
        return Err(Errno::EPERM);
    }
    clock::set_realtime(Time {
        sec: sec as u64,
        nsec: nsec as u64,
    })?;
    Ok(0)
}

fn field(text: &str) -> [u8; 65] {
    let mut out = [0u8; 65];
    out[..text.len()].copy_from_slice(text.as_bytes());
    out
}

/// uname's system name: "Linux", because this kernel offers Linux's
/// system call interface and programs decide by this name which one they
/// speak (configure scripts, Python's `platform`, busybox's applets), as
/// gVisor and WSL answer "Linux" for the same reason. The kernel's own
/// name is in the release and version strings, which say what it is.
pub const SYSNAME: &str = "Linux";
/// The release: the Linux whose behaviour the tests compare with (Debian
/// 12's 6.1), then the kernel's own name and version, as a distribution
/// marks its builds.
pub const RELEASE: &str = concat!("6.1.0-profkern-", env!("CARGO_PKG_VERSION"));
pub const VERSION: &str = "#1 profkern, a teaching kernel with native profil(2)";

/// The machine's names once root changed them (sethostname(2),
/// setdomainname(2)): the host name and the NIS domain name, each at most
/// 64 bytes (a uname field less its NUL); `None` until then.
static NAMES: IrqLock<[Option<[u8; 65]>; 2]> = IrqLock::new(Rank::Service, [None; 2]);
/// Until set: the host name the Debian root's /etc/hostname also says.
const DEFAULT_NAMES: [&str; 2] = ["profkern", "(none)"];

/// Which of the machine's names.
#[derive(Clone, Copy)]
pub enum UtsField {
    Host = 0,
    Domain = 1,
}

/// The host or domain name now, NUL-padded (also
/// /proc/sys/kernel/hostname and domainname).
pub fn name_of(which: UtsField) -> [u8; 65] {
    NAMES.lock()[which as usize].unwrap_or_else(|| field(DEFAULT_NAMES[which as usize]))
}

/// sethostname(2), setdomainname(2): `len` bytes at `buf` (more than 64
/// EINVAL, a bad pointer EFAULT) become the name; CAP_SYS_ADMIN only
/// (EPERM), as on Linux. An empty name is allowed.
pub fn set_name(which: UtsField, buf: u64, len: u64) -> SysResult {
    if !crate::proc::cred().capable(abi::types::CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l < 65)
        .ok_or(Errno::EINVAL)?;
    let mut name = [0u8; 65];
    uaccess::copy_from_user(&mut name[..len], buf)?;
    NAMES.lock()[which as usize] = Some(name);
    Ok(0)
}

pub fn uname(buf: u64) -> SysResult {
    let name = Utsname {
        sysname: field(SYSNAME),
        nodename: name_of(UtsField::Host),
        release: field(RELEASE),
        version: field(VERSION),
        machine: field("x86_64"),
        domainname: name_of(UtsField::Domain),
    };
    uaccess::write(buf, &name)?;
    Ok(0)
}

/// getrandom(2): `len` bytes from the kernel's generator (random.rs), at
/// most 32 MiB - 1 per call as on Linux, in 4 KiB steps so a short buffer
/// costs no allocation and a long one no long copy. The generator is seeded
/// at boot, so GRND_NONBLOCK and GRND_RANDOM change nothing; a request cut
/// short by a bad page returns EFAULT only if nothing was copied.
pub fn getrandom(buf: u64, len: u64, flags: u32) -> SysResult {
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0
        || flags & (GRND_RANDOM | GRND_INSECURE) == GRND_RANDOM | GRND_INSECURE
    {
        return Err(Errno::EINVAL);
    }
    let len = len.min(GETRANDOM_MAX) as usize;
    let mut chunk = [0u8; 4096];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(chunk.len());
        crate::random::fill(&mut chunk[..n]);
        if let Err(e) = uaccess::copy_to_user(buf + done as u64, &chunk[..n]) {
            return if done == 0 { Err(e) } else { Ok(done) };
        }
        done += n;
    }
    Ok(done)
}

pub fn kinfo(buf: u64) -> SysResult {
    let (_, heap_bytes) = mm::heap::usage();
    let info = KInfo {
        ticks: clock::ticks(),
        hz: u64::from(clock::hz()),
        free_frames: mm::frames::free_count() as u64,
        total_frames: mm::frames::total_count() as u64,
        heap_frames: heap_bytes as u64 / mm::PAGE_SIZE,
        kernel_table_frames: mm::paging::kernel_table_frames(),
        tsc_per_sec: clock::tsc_per_sec(),
        processes: TABLE.lock().procs.len() as u64,
    };
    uaccess::write(buf, &info)?;
    Ok(0)
}

/// proclist: one row per process (state: `Table::process_state`).
pub fn proclist(buf: u64, count: u64) -> SysResult {
    let rows: alloc::vec::Vec<ProcInfo> = {
        let table = TABLE.lock();
        table
            .procs
            .values()
            .map(|p| {
                let mut name = [0u8; 32];
                let n = p.name.len().min(31);
                name[..n].copy_from_slice(&p.name.as_bytes()[..n]);
                let state = table.process_state(p);
                ProcInfo {
                    pid: p.pid,
                    ppid: p.ppid,
                    pgid: p.pgid,
                    state,
                    profiling: u32::from(p.prof.is_on()),
                    threads: p.live_threads,
                    cpu: table.process_cpu(p).unwrap_or(abi::types::PROC_NO_CPU),
                    pad: 0,
                    user_ticks: p.user_ticks,
                    system_ticks: p.system_ticks,
                    name,
                }
            })
            .collect()
    };
    for (i, row) in rows.iter().take(count as usize).enumerate() {
        uaccess::write(buf + (i * size_of::<ProcInfo>()) as u64, row)?;
    }
    Ok(rows.len())
}

/// Only init may send the exported files home before power-off (while
/// the root disk and /tmp it unmounts still hold them).
pub fn export() -> SysResult {
    if current(|p| p.pid) != crate::proc::INIT_PID {
        return Err(Errno::EPERM);
    }
    crate::fs::export::export_all();
    Ok(0)
}

/// Only init may power the machine off (its exit does so too).
pub fn poweroff(status: u64) -> SysResult {
    if current(|p| p.pid) != crate::proc::INIT_PID {
        return Err(Errno::EPERM);
    }
    crate::fs::export::export_all();
    crate::arch::power::exit(status.min(126) as u8)
}

pub fn sysinfo(buf: u64) -> SysResult {
    let (loads, procs) = {
        let table = TABLE.lock();
        (table.load.for_sysinfo(), table.threads.len() as u16)
    };
    let info = abi::types::SysInfo {
        uptime: (clock::nanos_since_boot() / 1_000_000_000) as i64,
        loads,
        totalram: mm::frames::total_count() as u64,
        freeram: mm::frames::free_count() as u64,
        procs,
        mem_unit: mm::PAGE_SIZE as u32,
        ..Default::default()
    };
    uaccess::write(buf, &info)?;
    Ok(0)
}

/// prlimit64(2): reports and sets a resource limit of process `pid` (0:
/// the caller); `new` and `old` may be 0. The old value is the one before
/// the change; the rules of a change are kcore::rlimit's, root being the
/// one who may raise a hard limit (Linux's CAP_SYS_RESOURCE). Another
/// process's limits are the caller's to see or change only if its real,
/// effective and saved user and group ids are all the caller's real ones
/// (EPERM), or the caller is root.
pub fn prlimit64(pid: i32, resource: u32, new: u64, old: u64) -> SysResult {
    use abi::types::Rlimit;
    let wanted: Option<Rlimit> = if new != 0 {
        Some(uaccess::read(new)?)
    } else {
        None
    };
    let (me, cred) = current(|p| (p.pid, p.cred.clone()));
    let pid = if pid == 0 { me } else { pid as u32 };
    let before = {
        let mut table = TABLE.lock();
        let p = table
            .procs
            .get_mut(&pid)
            .filter(|p| !p.is_zombie() && pid as i32 > 0)
            .ok_or(Errno::ESRCH)?;
        let t = &p.cred;
        let same_user = [t.ruid, t.euid, t.suid].iter().all(|&id| id == cred.ruid)
            && [t.rgid, t.egid, t.sgid].iter().all(|&id| id == cred.rgid);
        if pid != me && !same_user && !cred.is_root() {
            return Err(Errno::EPERM);
        }
        let before = p.limits.get(resource)?;
        if let Some(wanted) = wanted {
            p.limits.set(resource, wanted, cred.is_root())?;
        }
        before
    };
    if old != 0 {
        uaccess::write(old, &before)?;
    }
    Ok(0)
}

/// getrlimit(2): the caller's limit of `resource`.
pub fn getrlimit(resource: u32, old: u64) -> SysResult {
    prlimit64(0, resource, 0, old)
}

/// setrlimit(2): changes the caller's limit of `resource`.
pub fn setrlimit(resource: u32, new: u64) -> SysResult {
    prlimit64(0, resource, new, 0)
}

/// The online CPUs, one bit each.
fn online_mask() -> u64 {
    let cpus = crate::arch::percpu::online() as u32;
    1u64.checked_shl(cpus).map_or(u64::MAX, |bit| bit - 1)
}

/// The thread `pid` names for the affinity calls (0: the caller); ESRCH
/// for none.
fn affinity_target(pid: i32) -> Result<u32, Errno> {
    match pid {
        0 => Ok(crate::proc::current_thread(|t| t.tid)),
        1.. if crate::proc::TABLE
            .lock()
            .threads
            .contains_key(&(pid as u32)) =>
        {
            Ok(pid as u32)
        }
        _ => Err(Errno::ESRCH),
    }
}

/// sched_setaffinity(2): the CPUs thread `pid` (0: the caller) may run
/// on, from `len` bytes of mask at `mask` (Linux's cpumask: one 64-bit
/// word here, a shorter one zero-filled, a longer one cut). The mask is
/// kept to the online CPUs, and EINVAL if none is left; EPERM unless the
/// caller's effective user is the target's real or effective user, or it
/// has CAP_SYS_NICE (Linux's `check_same_owner`). A thread running where
/// it may no longer run gives up its CPU at once, and the scheduler runs
/// it only where it may (proc/sched.rs).
pub fn sched_setaffinity(pid: i32, len: u64, mask: u64) -> SysResult {
    // Linux's order: the mask is read (EFAULT), the thread found (ESRCH),
    // the owner checked (EPERM), and then an empty mask refused (EINVAL).
    let mut bytes = [0u8; 8];
    let take = len.min(8) as usize;
    uaccess::copy_from_user(&mut bytes[..take], mask)?;
    let allowed = u64::from_le_bytes(bytes) & online_mask();
    let tid = affinity_target(pid)?;
    let cred = crate::proc::cred();
    let mut table = crate::proc::TABLE.lock();
    let table = &mut *table;
    let t = table.threads.get_mut(&tid).ok_or(Errno::ESRCH)?;
    let owner = table.procs.get(&t.pid).map(|p| (p.cred.ruid, p.cred.euid));
    let same_owner = owner.is_some_and(|(ruid, euid)| cred.euid == ruid || cred.euid == euid);
    if !same_owner && !cred.capable(CAP_SYS_NICE) {
        return Err(Errno::EPERM);
    }
    if allowed == 0 {
        return Err(Errno::EINVAL);
    }
    t.allowed_cpus = allowed;
    if t.on_cpu && !t.may_run_on(t.cpu) {
        t.note_work(crate::proc::Work::Resched);
    }
    Ok(0)
}

/// sched_getaffinity(2): the CPUs thread `pid` (0: the caller) may run
/// on, as one 64-bit word of mask; returns its size, as Linux returns
/// its cpumask's. EINVAL for a buffer shorter than that or not a whole
/// number of words.
pub fn sched_getaffinity(pid: i32, size: u64, mask: u64) -> SysResult {
    let tid = affinity_target(pid)?;
    if size < 8 || !size.is_multiple_of(8) {
        return Err(Errno::EINVAL);
    }
    let allowed = crate::proc::TABLE
        .lock()
        .threads
        .get(&tid)
        .map(|t| t.allowed_cpus)
        .ok_or(Errno::ESRCH)?;
    uaccess::write(mask, &(allowed & online_mask()))?;
    Ok(8)
}

/// getcpu(2): the CPU the caller runs on and its NUMA node (always 0: one
/// node). Either pointer may be null; the third argument (a cache, unused
/// by Linux since 2.6.24) is ignored. The answer may be stale by the time
/// the caller reads it: the scheduler may move the thread at any tick.
pub fn getcpu(cpu: u64, node: u64) -> SysResult {
    let index = crate::arch::percpu::this_cpu().index();
    if cpu != 0 {
        uaccess::write(cpu, &index)?;
    }
    if node != 0 {
        uaccess::write(node, &0u32)?;
    }
    Ok(0)
}

/// time(2): seconds since the epoch as of the last tick, as Linux's
/// `ktime_get_real_seconds` and the vDSO's `time` give them.
pub fn time(out: u64) -> SysResult {
    let seconds = clock::now(Clock::RealtimeCoarse).sec as i64;
    if out != 0 {
        uaccess::write(out, &seconds)?;
    }
    Ok(seconds as usize)
}

/// clock_getres(2): the TSC-backed clocks resolve nanoseconds; the coarse
/// clocks, which stop at the last tick, and the CPU-time clocks (a
/// process's or thread's by its id too) one tick.
pub fn clock_getres(clock_id: u32, out: u64) -> SysResult {
    let nanos = match clock_id {
        CLOCK_REALTIME | CLOCK_TAI | CLOCK_MONOTONIC | CLOCK_MONOTONIC_RAW | CLOCK_BOOTTIME => 1,
        CLOCK_REALTIME_COARSE
        | CLOCK_MONOTONIC_COARSE
        | CLOCK_PROCESS_CPUTIME_ID
        | CLOCK_THREAD_CPUTIME_ID => 1_000_000_000 / u64::from(clock::hz()),
        // Another's CPU clock: one tick too, once it is found.
        _ => {
            let (owner, which) = cpuclock::decode(clock_id as i32).ok_or(Errno::EINVAL)?;
            cpu_time(owner, which)?;
            1_000_000_000 / u64::from(clock::hz())
        }
    };
    if out != 0 {
        uaccess::write(
            out,
            &Timespec {
                tv_sec: 0,
                tv_nsec: nanos as i64,
            },
        )?;
    }
    Ok(0)
}

/// times(2), in ticks (`AT_CLKTCK` per second); returns ticks since boot.
pub fn times(out: u64) -> SysResult {
    let tms = current(|p| abi::types::Tms {
        utime: p.user_ticks as i64,
        stime: p.system_ticks as i64,
        cutime: p.children_ticks.0 as i64,
        cstime: p.children_ticks.1 as i64,
    });
    if out != 0 {
        uaccess::write(out, &tms)?;
    }
    Ok(clock::ticks() as usize)
}

/// getrusage(2): user and system time and context switches of the calling
/// process, its reaped children, or the calling thread.
pub fn getrusage(who: i32, out: u64) -> SysResult {
    let ((user, system), switches) = match who {
        abi::types::RUSAGE_SELF => current(|p| ((p.user_ticks, p.system_ticks), p.switches)),
        abi::types::RUSAGE_CHILDREN => current(|p| (p.children_ticks, p.children_switches)),
        abi::types::RUSAGE_THREAD => crate::proc::current_thread(|t| {
            ((t.user_ticks, t.cpu_ticks - t.user_ticks), t.switches)
        }),
        _ => return Err(Errno::EINVAL),
    };
    uaccess::write(out, &rusage((user, system), switches))?;
    Ok(0)
}

/// A `struct rusage` of user and system `ticks` and context `switches`
/// (the fields nothing here counts are 0).
pub fn rusage((user, system): (u64, u64), switches: crate::proc::Switches) -> abi::types::Rusage {
    let hz = u64::from(clock::hz());
    let mut usage = abi::types::Rusage {
        utime: kcore::signal::timeval_from_ticks(user, hz),
        stime: kcore::signal::timeval_from_ticks(system, hz),
        ..Default::default()
    };
    usage.counters[abi::types::RU_NVCSW] = switches.voluntary as i64;
    usage.counters[abi::types::RU_NIVCSW] = switches.involuntary as i64;
    usage
}

/// syslog(2), what `dmesg` calls: the kernel log from the ring, each line
/// `<level>[seconds.micros] text` (kcore::kmsg). READ_ALL (3) gives the
/// newest lines that fit since the last CLEAR; READ (2) goes on from the
/// last READ, and does not wait for more (Linux's waits); READ_CLEAR (4)
/// reads all and clears; CLEAR (5); CONSOLE_LEVEL (8) sets the console
/// level 1 to 8, CONSOLE_OFF (6) and CONSOLE_ON (7) silence the console
/// and bring it back; SIZE_UNREAD (9), SIZE_BUFFER (10). READ_ALL and
/// SIZE_BUFFER are anyone's (Linux with dmesg_restrict 0); the rest need
/// CAP_SYS_ADMIN (Linux: CAP_SYSLOG, which root has too), else EPERM.
pub fn syslog(action: i32, buf: u64, len: i32) -> SysResult {
    use abi::types::*;
    use core::sync::atomic::Ordering::Relaxed;
    /// The console level CONSOLE_OFF saved, for CONSOLE_ON (0: none).
    static SAVED_LEVEL: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);
    let open_to_all = matches!(action, SYSLOG_ACTION_READ_ALL | SYSLOG_ACTION_SIZE_BUFFER);
    if !(SYSLOG_ACTION_CLOSE..=SYSLOG_ACTION_SIZE_BUFFER).contains(&action) {
        return Err(Errno::EINVAL);
    }
    if !open_to_all && !crate::proc::cred().capable(CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    let reads = matches!(
        action,
        SYSLOG_ACTION_READ | SYSLOG_ACTION_READ_ALL | SYSLOG_ACTION_READ_CLEAR
    );
    if reads {
        if buf == 0 || len < 0 {
            return Err(Errno::EINVAL);
        }
        if len == 0 {
            return Ok(0);
        }
        uaccess::check_range(buf, len as usize, true)?;
    }
    let hz = clock::hz();
    match action {
        SYSLOG_ACTION_READ => {
            // The lines that fit, from where the last READ stopped.
            let mut text = alloc::string::String::new();
            let mut next = crate::log::SYSLOG_READ.load(Relaxed);
            let mut full = false;
            crate::log::each_record(next, |span, record| {
                let line = kcore::kmsg::syslog_line(&record, hz);
                full |= text.len() + line.len() > len as usize;
                if !full {
                    text.push_str(&line);
                    next = span.end;
                }
            });
            uaccess::copy_to_user(buf, text.as_bytes())?;
            crate::log::SYSLOG_READ.store(next, Relaxed);
            Ok(text.len())
        }
        SYSLOG_ACTION_READ_ALL | SYSLOG_ACTION_READ_CLEAR => {
            // The newest lines that fit, oldest first.
            let mut lines = alloc::vec::Vec::new();
            crate::log::each_record(crate::log::SYSLOG_CLEARED.load(Relaxed), |_, record| {
                lines.push(kcore::kmsg::syslog_line(&record, hz));
            });
            let mut room = len as usize;
            let kept = lines
                .iter()
                .rev()
                .take_while(|line| {
                    let fits = line.len() <= room;
                    room = room.saturating_sub(line.len());
                    fits
                })
                .count();
            let text: alloc::string::String = lines[lines.len() - kept..].concat();
            uaccess::copy_to_user(buf, text.as_bytes())?;
            if action == SYSLOG_ACTION_READ_CLEAR {
                crate::log::SYSLOG_CLEARED.store(crate::log::written(), Relaxed);
            }
            Ok(text.len())
        }
        SYSLOG_ACTION_CLEAR => {
            crate::log::SYSLOG_CLEARED.store(crate::log::written(), Relaxed);
            Ok(0)
        }
        SYSLOG_ACTION_CONSOLE_OFF => {
            if SAVED_LEVEL.load(Relaxed) == 0 {
                SAVED_LEVEL.store(crate::log::console_level(), Relaxed);
            }
            // Linux's minimum_console_loglevel: emergencies still print.
            crate::log::set_console_level(1);
            Ok(0)
        }
        SYSLOG_ACTION_CONSOLE_ON => {
            let saved = SAVED_LEVEL.swap(0, Relaxed);
            if saved != 0 {
                crate::log::set_console_level(saved);
            }
            Ok(0)
        }
        SYSLOG_ACTION_CONSOLE_LEVEL => {
            if !(1..=8).contains(&len) {
                return Err(Errno::EINVAL);
            }
            crate::log::set_console_level(len as u8);
            SAVED_LEVEL.store(0, Relaxed);
            Ok(0)
        }
        SYSLOG_ACTION_SIZE_UNREAD => {
            let mut unread = 0;
            crate::log::each_record(crate::log::SYSLOG_READ.load(Relaxed), |_, record| {
                unread += kcore::kmsg::syslog_line(&record, hz).len();
            });
            Ok(unread)
        }
        SYSLOG_ACTION_SIZE_BUFFER => Ok(crate::log::RING_BYTES),
        _ => Ok(0), // CLOSE, OPEN
    }
}

/// kcheck(): the frame table, the heap and the process table, checked.
pub fn kcheck() -> SysResult {
    let checks: [fn() -> Result<(), &'static str>; 3] =
        [mm::frames::check, mm::heap::check, crate::proc::check];
    let mut sound = true;
    for check in checks {
        if let Err(why) = check() {
            crate::warn!("kcheck: {why}");
            sound = false;
        }
    }
    if sound { Ok(0) } else { Err(Errno::EIO) }
}
