//! Profiling for gprof: monstartup, moncontrol, _mcleanup, mcount.
//!
//! `monstartup(low, high)` allocates a histogram of one 16-bit bin per 4
//! bytes of text and an arc table for 3 arcs per 100 bytes of text (glibc's
//! ARCDENSITY), or exactly `GMON_MAXARCS=N` arcs when the environment says
//! so (clamped to 1..=2^20: `kcore::gmon::arc_limit`), and turns on the
//! kernel's profil(2) over `[low, high)`. Functions compiled with `gcc -pg`
//! or `rustc -Z instrument-mcount` call `mcount` on entry; it records the arc
//! (caller's call site, callee) in the table (`kcore::gmon::record_arc`).
//! `_mcleanup` turns profiling off and writes the profile in the format GNU
//! gprof reads (`kcore::gmon`): to `gmon.out` in the current directory, or
//! to `PREFIX.PID` when `GMON_OUT_PREFIX=PREFIX` is set (glibc's variable),
//! so that the processes of a program that forks each keep their own. The
//! file holds the program file's addresses, as the symbol table gprof
//! reads does: the load bias of a PIE (`load_bias`) is taken off.
//!
//! When the table is full, arcs already in it go on counting and calls on
//! new arcs are counted as lost: `_mcleanup` says how many on stderr, and
//! the file still has the whole histogram and every arc that fit.
//!
//! mcount runs inside every profiled function, including libc-lite's own, so
//! its guard is the first thing it checks, in assembly, before any code that
//! could itself be instrumented: the byte `GMON_BUSY` is 1 while profiling is
//! off or an arc is being recorded, and mcount then returns at once. A full
//! table turns arc recording off (and `_mcleanup` says so on stderr) instead
//! of failing.

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, Ordering};
use kcore::gmon::{Arc, Histogram};

use crate::sys;

use kcore::gmon::BYTES_PER_BIN;

/// 1 while mcount must not record (off, or already inside mcount).
static GMON_BUSY: AtomicU8 = AtomicU8::new(1);

struct Profile {
    low: u64,
    high: u64,
    bins: Vec<u16>,
    /// Open-addressing table of arcs; count 0 marks a free slot.
    arcs: Vec<Arc>,
    used: usize,
    /// Most arcs the table takes.
    limit: usize,
    /// Calls not recorded because the table was full.
    lost: u64,
}

struct Global(UnsafeCell<Option<Profile>>);
// SAFETY: programs here are single-threaded; the state is only touched by
// monstartup/moncontrol/_mcleanup and by mcount behind GMON_BUSY.
unsafe impl Sync for Global {}
static STATE: Global = Global(UnsafeCell::new(None));

/// The profile.
///
/// # Safety
/// The caller must not hold another reference from `state` at the same
/// time: monstartup, moncontrol and _mcleanup run in the program's one
/// thread outside mcount, and mcount's recorder runs only with GMON_BUSY
/// set, so none of them interleave.
unsafe fn state() -> &'static mut Option<Profile> {
    // SAFETY: the caller's promise (see Global).
    unsafe { &mut *STATE.0.get() }
}

/// The value of environment variable `name`.
fn env(name: &str) -> Option<&'static str> {
    crate::env::vars().find_map(|v| v.strip_prefix(name)?.strip_prefix('='))
}

/// Where `prof` asks the profile to go (`LIBC_LITE_PROFILE=FILE`), if it does.
pub fn profile_file() -> Option<&'static str> {
    env("LIBC_LITE_PROFILE")
}

/// Where this process's profile goes: `LIBC_LITE_PROFILE`, else
/// `GMON_OUT_PREFIX.PID`, else `gmon.out`.
fn output_path() -> alloc::string::String {
    match (profile_file(), env("GMON_OUT_PREFIX")) {
        (Some(file), _) => file.into(),
        (None, Some(prefix)) => alloc::format!("{prefix}.{}", sys::getpid()),
        (None, None) => "gmon.out".into(),
    }
}

/// Starts profiling the text in `[lowpc, highpc)`.
#[unsafe(no_mangle)]
pub extern "C" fn monstartup(lowpc: usize, highpc: usize) {
    GMON_BUSY.store(1, Ordering::SeqCst);
    let low = lowpc as u64 & !(BYTES_PER_BIN - 1);
    let high = (highpc as u64).next_multiple_of(BYTES_PER_BIN);
    if high <= low {
        crate::eprintln!("monstartup: empty text range {lowpc:#x}..{highpc:#x}");
        return;
    }
    let nbins = ((high - low) / BYTES_PER_BIN) as usize;
    let limit = kcore::gmon::arc_limit(env("GMON_MAXARCS"), high - low);
    let table = kcore::gmon::arc_slots(limit);
    // SAFETY: monstartup runs outside mcount (GMON_BUSY is set above).
    *unsafe { state() } = Some(Profile {
        low,
        high,
        bins: vec![0; nbins],
        arcs: vec![
            Arc {
                from_pc: 0,
                self_pc: 0,
                count: 0
            };
            table
        ],
        used: 0,
        limit,
        lost: 0,
    });
    moncontrol(1);
}

/// Turns profiling on (`mode != 0`) or off, keeping what was gathered.
#[unsafe(no_mangle)]
pub extern "C" fn moncontrol(mode: i32) {
    // SAFETY: called by the program, not from inside mcount.
    let Some(s) = (unsafe { state() }).as_mut() else {
        return;
    };
    let result = if mode != 0 {
        // One bin per 4 bytes: scale 65536 * 2 / 4.
        let scale = (65536 * 2 / BYTES_PER_BIN) as u32;
        sys::profil(&mut s.bins, s.low, scale)
    } else {
        sys::profil(&mut [], 0, 0)
    };
    match result {
        Ok(()) => GMON_BUSY.store(u8::from(mode == 0), Ordering::SeqCst),
        Err(e) => crate::eprintln!("moncontrol: profil: {}", e.message()),
    }
}

/// Stops profiling and writes gmon.out.
#[unsafe(no_mangle)]
pub extern "C" fn _mcleanup() {
    moncontrol(0);
    GMON_BUSY.store(1, Ordering::SeqCst);
    // SAFETY: GMON_BUSY is set: mcount records nothing from here on.
    let Some(s) = (unsafe { state() }).take() else {
        return;
    };
    let rate = crate::env::clock_ticks_per_second() as u32;
    // The file's addresses, not the running ones: gprof matches them with
    // the symbol table, and a PIE runs at a base the kernel chose.
    let bias = load_bias();
    let arcs: Vec<Arc> = s
        .arcs
        .iter()
        .filter(|a| a.count > 0)
        .map(|a| Arc {
            from_pc: a.from_pc.wrapping_sub(bias),
            self_pc: a.self_pc.wrapping_sub(bias),
            count: a.count,
        })
        .collect();
    let mut out = Vec::new();
    kcore::gmon::encode(
        &Histogram {
            low_pc: s.low.wrapping_sub(bias),
            high_pc: s.high.wrapping_sub(bias),
            prof_rate: rate,
            bins: &s.bins,
        },
        &arcs,
        &mut out,
    );
    let path = output_path();
    if s.lost > 0 {
        crate::eprintln!(
            "gmon: arc table full ({} arcs): {} calls were not recorded; {path} has the histogram and the arcs that fit",
            s.limit,
            s.lost
        );
    }
    use abi::types::{O_CREAT, O_TRUNC, O_WRONLY};
    let path = path.as_str();
    let written = sys::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644).and_then(|fd| {
        let r = sys::write_all(fd, &out);
        let _ = sys::close(fd);
        r
    });
    if let Err(e) = written {
        crate::eprintln!("gmon: cannot write {path}: {}", e.message());
    }
}

/// How far the program runs from the addresses its file gives
/// (`kcore::elf::load_bias`, from the aux vector's `AT_PHDR` and
/// `AT_PHNUM`): 0 for a program linked at a fixed address, the base the
/// kernel chose for a PIE.
fn load_bias() -> u64 {
    use abi::types::{AT_PHDR, AT_PHNUM};
    let (Some(at_phdr), Some(count)) = (crate::env::auxv(AT_PHDR), crate::env::auxv(AT_PHNUM))
    else {
        return 0;
    };
    // SAFETY: the kernel's AT_PHDR and AT_PHNUM describe the program
    // headers of the running program, mapped readable for its lifetime.
    let headers = unsafe {
        core::slice::from_raw_parts(at_phdr as *const u8, count as usize * kcore::elf::PHDR_SIZE)
    };
    kcore::elf::load_bias(at_phdr, headers)
}

/// Records one call: from the call site `from_pc` into `self_pc`'s function.
/// Called by mcount with GMON_BUSY already set.
extern "C" fn gmon_record_arc(from_pc: u64, self_pc: u64) {
    // SAFETY: the mcount stub set GMON_BUSY, so no other use interleaves.
    let Some(s) = (unsafe { state() }).as_mut() else {
        return;
    };
    if from_pc < s.low || from_pc >= s.high {
        return; // a call from outside the profiled text
    }
    if !kcore::gmon::record_arc(&mut s.arcs, &mut s.used, s.limit, from_pc, self_pc) {
        s.lost += 1;
    }
}

/// The function `gcc -pg` calls at the entry of every function, right after
/// its prologue (push rbp; mov rbp, rsp): so 8(%rbp) is that function's
/// return address (the call site in its caller), and mcount's own return
/// address is inside it. All argument registers are preserved, since the
/// function has not used them yet. Naked, so that nothing runs before the
/// guard is checked; the guard and the recorder are named by `sym`, which
/// in a shared object (the LD_PRELOAD build of libc-lite/musl-gmon) are the
/// library's own, not symbols another object could take over.
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn mcount() {
    core::arch::naked_asm!(
        "cmpb $0, {busy}(%rip)",
        "jne 1f",
        "movb $1, {busy}(%rip)",
        "pushq %rax",
        "pushq %rcx",
        "pushq %rdx",
        "pushq %rsi",
        "pushq %rdi",
        "pushq %r8",
        "pushq %r9",
        "movq 56(%rsp), %rsi",
        "movq 8(%rbp), %rdi",
        "call {record}",
        "popq %r9",
        "popq %r8",
        "popq %rdi",
        "popq %rsi",
        "popq %rdx",
        "popq %rcx",
        "popq %rax",
        "movb $0, {busy}(%rip)",
        "1:",
        "ret",
        busy = sym GMON_BUSY,
        record = sym gmon_record_arc,
        options(att_syntax)
    )
}
