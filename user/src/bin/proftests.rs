//! /bin/proftests: the profil(2) contract (`docs/profil.md`),
//! checked from user space, one test per sentence of the spec.
//!
//! Each test runs in its own child process and prints `proftest: ok NAME`
//! or `proftest: FAIL NAME: why`. The relation is checked against the
//! formula written out here, independently of the kernel's code.
//! `proftests NAME...` runs only the named tests.

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::*;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use libc_lite::{Errno, eprintln, println, sys};
use user::spin::{self, loop_a, loop_b};

libc_lite::entry!(run);

use user::ensure;
use user::harness::{Outcome, Test};

/// BSD's relation, written out: floor(floor((pc - offset) / 2) * scale / 65536).
fn expected_bin(pc: u64, offset: u64, scale: u32) -> Option<u64> {
    if pc < offset {
        return None;
    }
    Some(((((pc - offset) / 2) as u128) * scale as u128 / 65536) as u64)
}

fn stat() -> ProfStat {
    sys::profstat(0).unwrap_or_default()
}

fn off() {
    let _ = sys::profil_raw(0, 0, 0, 0);
}

fn total(buf: &[u16]) -> u64 {
    buf.iter().map(|&c| u64::from(c)).sum()
}

/// Spins in loop A until this thread has run `ticks` ticks
/// (`spin::for_cpu_ticks`): as many samples as a profile can have, however
/// little of the host a busy machine leaves the virtual CPU.
fn spin_a(ticks: u64) -> u64 {
    spin::for_cpu_ticks(loop_a, ticks)
}

/// Profiles loop A at `scale` with the offset `below_start` bytes under the
/// loop. At least 95% of the samples (or all but the two that the entry and
/// exit can take) must land exactly in the bins the formula gives for the
/// loop's pcs; the rest may only be in bins of the spin function's own entry
/// and exit code (a tick can catch the CPU there), never anywhere else.
fn check_relation(scale: u32, below_start: u64) -> Outcome {
    let (start, end) = spin::range_a();
    let function = loop_a as *const () as u64;
    let offset = start - below_start;
    let first = expected_bin(start, offset, scale).unwrap();
    let last = expected_bin(end - 1, offset, scale).unwrap();
    let near_first = expected_bin(function.max(offset), offset, scale).unwrap();
    let near_last = expected_bin(end + 32, offset, scale).unwrap();
    let mut buf = vec![0u16; (near_last + 16) as usize];
    sys::profil(&mut buf, offset, scale).map_err(|e| format!("profil: {}", e.name()))?;
    let asked_again = spin_a(40);
    off();
    let counted = total(&buf);
    let context = format!("scale {scale:#x}, offset start-{below_start}");
    // The loop ran 40 ticks of its own (a busy host may still make QEMU
    // lose one now and then).
    ensure!(
        counted >= 36,
        "{context}: only {counted} samples in 40 ticks"
    );
    let in_loop: u64 = buf[first as usize..=last as usize]
        .iter()
        .map(|&c| u64::from(c))
        .sum();
    // Samples outside the loop can only come from the way in and out: the
    // return from profil, loop_a's entry and exit code, the call of off(),
    // and each time the spin asked how long it had run, when a busy host
    // left it short of ticks (one run beside a CPU hog counted 28 in 40
    // ticks, 2 of them there; four hogs put 3 of 40 there).
    let outside = counted - in_loop;
    ensure!(
        in_loop * 100 >= counted * 95 || outside <= 2 + asked_again,
        "{context}: {in_loop} of {counted} samples in bins {first}..={last} \
         (the spin asked {asked_again} more times)"
    );
    // Wrong bin arithmetic would put many counts outside the spin function's
    // bins; the way in and out may put two there (the return from the
    // profil call is elsewhere in the program, and can fall in the buffer
    // when the offset is far below the loop).
    let stray: u64 = buf
        .iter()
        .enumerate()
        .filter(|&(bin, _)| !(near_first..=near_last).contains(&(bin as u64)))
        .map(|(_, &count)| u64::from(count))
        .sum();
    ensure!(
        stray <= 2 + asked_again,
        "{context}: {stray} counts outside bins {near_first}..={near_last}, where the spin function's pcs map (the loop to {first}..={last}): {:?}",
        buf.iter()
            .enumerate()
            .filter(|&(bin, &count)| count > 0 && !(near_first..=near_last).contains(&(bin as u64)))
            .collect::<Vec<_>>()
    );
    Ok(())
}

fn bin_relation_is_exact() -> Outcome {
    for scale in [65536, 32768, 16384, 0x4000 + 0x321, 0x1235, 1] {
        for below in [0, 1, 1000, 0x2_0001] {
            check_relation(scale, below)?;
        }
    }
    Ok(())
}

fn pc_below_offset_is_dropped() -> Outcome {
    let (_, end) = spin::range_a();
    let mut buf = vec![0u16; 64];
    // Past the loop and its function's exit code: nothing runs at or above this.
    sys::profil(&mut buf, end + 64, 65536).map_err(|e| e.name())?;
    spin_a(30);
    let s = stat();
    off();
    ensure!(
        total(&buf[..4]) == 0,
        "samples below the offset were counted: {:?}",
        &buf[..4]
    );
    ensure!(
        s.dropped >= 15,
        "only {} of ~30 ticks counted as dropped",
        s.dropped
    );
    Ok(())
}

fn bin_past_the_buffer_is_dropped() -> Outcome {
    let (start, _) = spin::range_a();
    let mut big = vec![0u16; 200];
    let (head, _) = big.split_at_mut(50); // the loop's bins (100..) are past these 50
    sys::profil(head, start - 200, 65536).map_err(|e| e.name())?;
    let asked_again = spin_a(30);
    let s = stat();
    off();
    // Past the buffer nothing may land, ever: the kernel would be writing
    // memory it was not given.
    ensure!(
        big[50..].iter().all(|&c| c == 0),
        "a count landed past size/2: {}",
        total(&big[50..])
    );
    // In the buffer only the way in and out can: code 100 to 200 bytes
    // below the loop (the spin's own, where a busy host's late tick lands
    // each time it asks again how long it ran). Beside four CPU hogs one
    // sample landed there.
    let in_buffer = total(&big[..50]);
    ensure!(
        in_buffer <= 2 + asked_again,
        "{in_buffer} counts in the buffer, whose pcs are below the loop (the spin asked {asked_again} more times)"
    );
    ensure!(
        s.dropped >= 15,
        "only {} ticks counted as dropped",
        s.dropped
    );
    Ok(())
}

fn scale_0_turns_profiling_off() -> Outcome {
    let (start, _) = spin::range_a();
    let mut buf = vec![0u16; 64];
    sys::profil(&mut buf, start, 65536).map_err(|e| e.name())?;
    spin_a(20);
    sys::profil_raw(0, 0, 0, 0).map_err(|e| format!("scale 0: {}", e.name()))?;
    let before = total(&buf);
    spin_a(20);
    ensure!(before > 0, "no counts while on");
    ensure!(total(&buf) == before, "counts kept arriving after scale 0");
    let s = stat();
    ensure!(
        s.on == 0 && s.stopped_by == PROF_STOPPED_BY_CALL,
        "profstat {s:?}"
    );
    Ok(())
}

fn scale_above_65536_is_einval_and_keeps_the_old_state() -> Outcome {
    let (start, _) = spin::range_a();
    let mut buf = vec![0u16; 64];
    let mut other = vec![0u16; 64];
    sys::profil(&mut buf, start, 65536).map_err(|e| e.name())?;
    let r = sys::profil(&mut other, start, 65537);
    ensure!(r == Err(Errno::EINVAL), "scale 65537 gave {r:?}");
    let r = sys::profil_raw(other.as_mut_ptr() as usize, 128, start, u32::MAX);
    ensure!(r == Err(Errno::EINVAL), "scale 0xffffffff gave {r:?}");
    spin_a(20);
    off();
    ensure!(total(&buf) > 0, "the earlier profile stopped counting");
    ensure!(total(&other) == 0, "the refused buffer was used");
    Ok(())
}

fn a_bad_buffer_is_efault_and_leaves_profiling_off() -> Outcome {
    let (start, _) = spin::range_a();
    let text = bin_relation_is_exact as *const () as usize;
    for (addr, size, what) in [
        (0usize, 64usize, "NULL"),
        (0xffff_8000_0000_0000, 64, "kernel half"),
        (0xffff_ffff_8000_0000, 64, "kernel text"),
        (0x1000_0000_0000, 64, "unmapped"),
        (text, 64, "read-only text"),
        (0x7fff_ffff_ff00, 0x1000, "past the user top"),
        (usize::MAX - 15, 64, "wraps around"),
    ] {
        let mut good = vec![0u16; 64];
        sys::profil(&mut good, start, 65536).map_err(|e| e.name())?;
        let r = sys::profil_raw(addr, size, start, 65536);
        ensure!(r == Err(Errno::EFAULT), "{what}: {r:?}");
        let s = stat();
        ensure!(
            s.on == 0 && s.stopped_by == PROF_STOPPED_BY_BAD_CALL,
            "{what}: still on ({s:?})"
        );
        spin_a(5);
        ensure!(
            total(&good) == 0,
            "{what}: the earlier buffer kept counting"
        );
    }
    Ok(())
}

fn size_0_and_1_are_accepted_and_count_nothing() -> Outcome {
    let (start, _) = spin::range_a();
    let mut buf = vec![0u16; 4];
    for size in [0usize, 1] {
        sys::profil_raw(buf.as_mut_ptr() as usize, size, start, 65536)
            .map_err(|e| format!("size {size}: {}", e.name()))?;
        ensure!(stat().on == 1, "size {size}: not on");
        spin_a(10);
        off();
        ensure!(
            total(&buf) == 0,
            "size {size}: counted into a buffer with no bins"
        );
    }
    Ok(())
}

fn a_fault_at_tick_time_turns_profiling_off_silently() -> Outcome {
    let (start, _) = spin::range_a();
    for how in ["munmap", "mprotect"] {
        let base = 0x5000_0000usize;
        let p = sys::mmap_fixed(base, 8192, PROT_READ | PROT_WRITE).map_err(|e| e.name())?;
        sys::profil_raw(p as usize, 8192, start, 65536).map_err(|e| e.name())?;
        spin_a(10);
        ensure!(
            stat().applied > 0,
            "{how}: nothing applied before the fault"
        );
        match how {
            "munmap" => sys::munmap(p, 8192).map_err(|e| e.name())?,
            _ => sys::mprotect(p, 8192, PROT_READ).map_err(|e| e.name())?,
        }
        spin_a(10);
        let s = stat();
        ensure!(
            s.on == 0 && s.stopped_by == PROF_STOPPED_BY_FAULT,
            "{how}: profstat {s:?}"
        );
        // Fresh memory at the same address gets no count.
        let _ = sys::munmap(p, 8192);
        let q = sys::mmap_fixed(base, 8192, PROT_READ | PROT_WRITE).map_err(|e| e.name())?;
        spin_a(10);
        // SAFETY: q..q+8192 is our fresh mapping.
        let fresh = unsafe { core::slice::from_raw_parts(q, 8192) };
        ensure!(
            fresh.iter().all(|&b| b == 0),
            "{how}: a count arrived after the fault"
        );
        let _ = sys::munmap(q, 8192);
    }
    Ok(()) // and we are still running: no signal
}

fn fork_child_inherits_and_counts_into_its_own_copy() -> Outcome {
    let (start, _) = spin::range_a();
    let mut buf = vec![0u16; 64];
    sys::profil(&mut buf, start, 65536).map_err(|e| e.name())?;
    let pid = sys::fork().map_err(|e| e.name())?;
    if pid == 0 {
        let before = total(&buf);
        let s = stat();
        spin_a(30);
        let ok = s.on == 1 && total(&buf) > before + 10;
        sys::exit(if ok { 0 } else { 1 });
    }
    spin_a(20);
    ensure!(stat().on == 1, "parent stopped profiling at fork");
    off();
    let snapshot = buf.clone();
    let status = sys::waitpid(pid as i32).map_err(|e| e.name())?;
    ensure!(
        sys::exited(status) == Some(0),
        "child was not profiling into its own buffer"
    );
    ensure!(
        buf == snapshot,
        "the child's counts landed in the parent's buffer"
    );
    ensure!(total(&buf) > 0, "the parent did not count after fork");
    Ok(())
}

const EXEC_BUF: usize = 0x6000_0000;

fn exec_turns_profiling_off() -> Outcome {
    let status = {
        let pid = sys::fork().map_err(|e| e.name())?;
        if pid == 0 {
            let p = sys::mmap_fixed(EXEC_BUF, 65536, PROT_READ | PROT_WRITE).expect("mmap");
            // Every pc of the program's text maps into this buffer.
            let _ = sys::profil_raw(p as usize, 65536, 0x40_0000, 4096);
            let e = sys::execve("/bin/profcheck", &["profcheck"], &[]);
            eprintln!("exec: {}", e.message());
            sys::exit(2);
        }
        sys::waitpid(pid as i32).map_err(|e| e.name())?
    };
    ensure!(
        sys::exited(status) == Some(0),
        "profcheck found itself profiled (status {status:#x})"
    );
    Ok(())
}

fn a_failed_exec_keeps_profiling_on() -> Outcome {
    let (start, _) = spin::range_a();
    let mut buf = vec![0u16; 64];
    sys::profil(&mut buf, start, 65536).map_err(|e| e.name())?;
    let e = sys::execve("/no/such/program", &["x"], &[]);
    ensure!(e == Errno::ENOENT, "exec gave {}", e.name());
    spin_a(10);
    off();
    ensure!(total(&buf) > 0, "profiling stopped after a failed exec");
    Ok(())
}

fn exit_turns_profiling_off() -> Outcome {
    let (start, _) = spin::range_a();
    let (r, w) = sys::pipe().map_err(|e| e.name())?;
    let pid = sys::fork().map_err(|e| e.name())?;
    if pid == 0 {
        let _ = sys::close(r);
        let mut buf = vec![0u16; 64];
        let _ = sys::profil(&mut buf, start, 65536);
        spin_a(5);
        sys::exit(0); // exit closes `w` after stopping the profile
    }
    let _ = sys::close(w);
    let mut b = [0u8; 1];
    let _ = sys::read(r, &mut b); // end of file: the child is exiting or a zombie
    let _ = sys::close(r);
    let s = sys::profstat(pid as i32);
    let status = sys::waitpid(pid as i32).map_err(|e| e.name())?;
    ensure!(sys::exited(status) == Some(0), "child status {status:#x}");
    let s = s.map_err(|e| format!("profstat of the exited child: {}", e.name()))?;
    ensure!(
        s.on == 0 && s.stopped_by == PROF_STOPPED_BY_EXIT,
        "exited child's profile: {s:?}"
    );
    Ok(())
}

fn bins_saturate_at_65535() -> Outcome {
    let (start, end) = spin::range_a();
    // One bin (size 2) that every pc of the loop maps to, preset near the top.
    let scale = 1;
    ensure!(
        expected_bin(end - 1, start, scale) == Some(0),
        "loop spans two bins at scale 1"
    );
    let mut buf = vec![65530u16; 1];
    sys::profil(&mut buf, start, scale).map_err(|e| e.name())?;
    spin_a(30);
    off();
    ensure!(
        buf[0] == 65535,
        "bin is {} after 30 ticks from 65530 (wrapped or lost)",
        buf[0]
    );
    Ok(())
}

/// A slow system call (a 4 MiB write to a ramfs file) issued from a known
/// address: returns the user pc the kernel sees for it (after `syscall`).
/// Never inlined, so every call issues the same `syscall` instruction.
#[inline(never)]
fn slow_write(fd: i32, data: &[u8]) -> u64 {
    let site: u64;
    // SAFETY: write(fd, data, len) with a valid buffer.
    unsafe {
        core::arch::asm!(
            "syscall",
            "2:",
            "lea {site}, [rip + 2b]",
            site = out(reg) site,
            inlateout("rax") abi::sys::WRITE => _,
            in("rdi") fd, in("rsi") data.as_ptr(), in("rdx") data.len(),
            lateout("rcx") _, lateout("r11") _,
        );
    }
    site
}

fn system_time_is_charged_to_the_syscall_site() -> Outcome {
    let data = vec![0x5au8; 4 << 20];
    let fd = sys::open("/slow", O_CREAT | O_RDWR | O_TRUNC, 0o644).map_err(|e| e.name())?;
    let site = slow_write(fd, &data[..1]);
    let offset = site - 64;
    let mut buf = vec![0u16; 128];
    sys::profil(&mut buf, offset, 65536).map_err(|e| e.name())?;
    // 150 of this thread's own CPU ticks, not 150 ms: beside four CPU
    // hogs a virtual CPU got 8 ticks in 150 ms of the guest's clock.
    let start = thread_ticks();
    while thread_ticks() - start < 150 {
        let _ = sys::lseek(fd, 0, SEEK_SET);
        slow_write(fd, &data);
    }
    let s = stat();
    off();
    let _ = sys::close(fd);
    let _ = sys::unlink("/slow");
    let at_site = u64::from(buf[expected_bin(site, offset, 65536).unwrap() as usize]);
    let all = total(&buf);
    ensure!(
        at_site >= 20,
        "only {at_site} samples at the syscall site {site:#x} ({all} near it; {s:?})"
    );
    ensure!(
        at_site * 10 >= all * 8,
        "{at_site} of {all} nearby samples at the syscall site"
    );
    Ok(())
}

fn multi_region_form() -> Outcome {
    let (a0, a1) = spin::range_a();
    let (b0, b1) = spin::range_b();
    type Spin = fn(u64) -> (u64, u64);
    let (a, b): ((u64, u64, Spin), (u64, u64, Spin)) = ((a0, a1, loop_a), (b0, b1, loop_b));
    let ((lo0, lo1, lo_spin), (hi0, hi1, hi_spin)) = if a0 < b0 { (a, b) } else { (b, a) };
    let mut low_buf = vec![0u16; 64];
    let mut high_buf = vec![0u16; 64];
    let region = |low: u64, high: u64, buf: &mut Vec<u16>, scale: u32| Prof {
        p_low: low,
        p_high: high,
        p_buff: buf.as_mut_ptr() as u64,
        p_bufsize: (buf.len() * 2) as i32,
        p_scale: scale,
    };
    let end = Prof::default();
    let regions = [
        region(lo0, lo1, &mut low_buf, 65536),
        region(hi0, hi1, &mut high_buf, PROF_SCALE_AUTO),
        end,
    ];
    sys::profil_regions(&regions).map_err(|e| format!("two regions: {}", e.name()))?;
    ensure!(
        stat().regions == 2,
        "profstat says {} regions",
        stat().regions
    );
    spin::for_cpu_ticks(lo_spin, 20);
    spin::for_cpu_ticks(hi_spin, 20);
    off();
    ensure!(
        total(&low_buf) >= 8 && total(&high_buf) >= 8,
        "counts {} and {}",
        total(&low_buf),
        total(&high_buf)
    );
    let auto = kcore_scale(hi0, hi1, 128);
    for (bin, &c) in high_buf.iter().enumerate() {
        let first = expected_bin(hi0, hi0, auto).unwrap();
        let last = expected_bin(hi1 - 1, hi0, auto).unwrap();
        ensure!(
            c == 0 || (first..=last).contains(&(bin as u64)),
            "computed scale: count in bin {bin}, want {first}..={last}"
        );
    }
    // The first region containing the pc wins: an outer region over both.
    let mut outer = vec![0u16; 4096];
    let mut inner = vec![0u16; 64];
    let regions = [
        region(lo0, lo1, &mut inner, 65536),
        region(lo0 - 2, hi1, &mut outer, PROF_SCALE_AUTO),
        end,
    ];
    sys::profil_regions(&regions).map_err(|e| format!("overlapping: {}", e.name()))?;
    let asked_again = spin::for_cpu_ticks(lo_spin, 20);
    off();
    ensure!(total(&inner) >= 8, "inner region got {}", total(&inner));
    // The outer region also covers the code between the loops, where the
    // spin asks how long it has run: two samples for the way in and out,
    // and one more each time a busy host's late tick can land in asking
    // again.
    ensure!(
        total(&outer) <= 2 + asked_again,
        "outer region got {} of the inner region's samples (the spin asked {asked_again} more times)",
        total(&outer)
    );
    // Not ascending, or low >= high: EINVAL, and the old state stays.
    let mut keep = vec![0u16; 64];
    sys::profil(&mut keep, lo0, 65536).map_err(|e| e.name())?;
    let bad = [
        region(hi0, hi1, &mut high_buf, 1),
        region(lo0, lo1, &mut low_buf, 1),
        end,
    ];
    ensure!(
        sys::profil_regions(&bad) == Err(Errno::EINVAL),
        "descending highs accepted"
    );
    let bad = [region(lo1, lo0, &mut low_buf, 1), end];
    ensure!(
        sys::profil_regions(&bad) == Err(Errno::EINVAL),
        "low > high accepted"
    );
    ensure!(
        stat().on == 1 && stat().regions == 1,
        "EINVAL changed the state"
    );
    let bad_buf = [
        Prof {
            p_low: lo0,
            p_high: lo1,
            p_buff: 0,
            p_bufsize: 64,
            p_scale: 1,
        },
        end,
    ];
    ensure!(
        sys::profil_regions(&bad_buf) == Err(Errno::EFAULT),
        "NULL region buffer accepted"
    );
    ensure!(stat().on == 0, "EFAULT left profiling on");
    Ok(())
}

/// The AIX computed scale, written out: the largest scale at which the
/// range's last half-word still falls in the last whole bin, in 1..=65536.
fn kcore_scale(low: u64, high: u64, bufsize: u64) -> u32 {
    let bins = (bufsize / 2) as u128;
    let last = ((high - low).max(1) - 1) as u128 / 2;
    if last == 0 {
        return 65536;
    }
    ((bins * 65536).saturating_sub(1) / last).clamp(1, 65536) as u32
}

/// The multi-region form's edges. A computed scale maps the whole range
/// onto the whole bins of an odd-sized buffer (3 bytes = 1 bin), even when
/// every sampled pc lies at the top of the range; `p_scale` 0 is EINVAL
/// with the state unchanged; and only `p_high` of the terminating entry is
/// read, so an array may end where its memory does.
fn multi_region_edges() -> Outcome {
    let (a0, a1) = spin::range_a();
    // The loop is the top 1.5% of a range whose only bin is bin 0.
    let mut bins = [0u16; 2];
    let odd = [
        Prof {
            p_low: a0 - 1000,
            p_high: a1,
            p_buff: bins.as_mut_ptr() as u64,
            p_bufsize: 3,
            p_scale: PROF_SCALE_AUTO,
        },
        Prof::default(),
    ];
    sys::profil_regions(&odd).map_err(|e| format!("odd buffer: {}", e.name()))?;
    spin_a(20);
    off();
    // SAFETY: profiling is off; read what the kernel wrote.
    let (first, second) = unsafe {
        (
            core::ptr::read_volatile(&bins[0]),
            core::ptr::read_volatile(&bins[1]),
        )
    };
    ensure!(
        first >= 8,
        "3-byte buffer: the loop's samples reached its one bin {first} times (dropped: {})",
        stat().dropped
    );
    ensure!(second == 0, "the odd byte was counted into: {second}");
    // Scale 0 in a region: EINVAL, the profile in force stays.
    let mut keep = vec![0u16; 64];
    sys::profil(&mut keep, a0, 65536).map_err(|e| e.name())?;
    let zero = [
        Prof {
            p_scale: 0,
            ..odd[0]
        },
        Prof::default(),
    ];
    ensure!(
        sys::profil_regions(&zero) == Err(Errno::EINVAL),
        "p_scale 0 accepted"
    );
    ensure!(
        stat().on == 1 && stat().regions == 1 && stat().stopped_by == PROF_RUNNING,
        "EINVAL changed the state"
    );
    off();
    // An array whose terminating entry has only p_low and p_high mapped.
    let page = sys::mmap_anon(2 * 4096, PROT_READ | PROT_WRITE).map_err(|e| e.name())?;
    // SAFETY: the second page of our own fresh mapping.
    sys::munmap(unsafe { page.add(4096) }, 4096).map_err(|e| e.name())?;
    let entry_len = size_of::<Prof>();
    // SAFETY: both writes are inside the first page, the last one ending
    // exactly at its end.
    let array = unsafe {
        let at = page.add(4096 - entry_len - 16);
        at.cast::<Prof>().write_unaligned(odd[0]);
        at.add(entry_len).cast::<[u64; 2]>().write_unaligned([0, 0]);
        at
    };
    // SAFETY: the array is one full entry and a terminator cut short; the
    // kernel must read only the terminator's p_high.
    let ret = unsafe {
        libc_lite::syscall::syscall(abi::sys::PROFIL, &[array as usize, PROFIL_MULTI, 0, 0])
    };
    let result = Errno::from_return(ret);
    let regions = stat().regions;
    off();
    let _ = sys::munmap(page, 4096);
    ensure!(
        result.is_ok() && regions == 1,
        "an array ending at the end of its page: {result:?}, {regions} regions"
    );
    Ok(())
}

fn time_shares_show_in_the_histogram() -> Outcome {
    let (a0, a1) = spin::range_a();
    let (b0, b1) = spin::range_b();
    let low = a0.min(b0);
    let high = a1.max(b1);
    let mut buf = vec![0u16; ((high - low) / 2 + 2) as usize];
    sys::profil(&mut buf, low, 65536).map_err(|e| e.name())?;
    // 3/4 of the time in A, 1/4 in B, interleaved in 60- and 20-tick
    // slices of this thread's own CPU ticks (`spin::for_cpu_ticks`), the
    // ticks that sample it. Slices of TSC time gave A 68% and 281 samples
    // in 2000 ticks' worth beside four CPU hogs: a host too busy to run
    // the virtual CPU lets the TSC run on while no tick comes. Long
    // slices: when the host stops the virtual CPU, the tick it missed
    // comes when it runs again, often just after the loop it belonged to
    // has ended, so each change of loop can move a tick from A to B.
    for _ in 0..25 {
        spin::for_cpu_ticks(loop_a, 60);
        spin::for_cpu_ticks(loop_b, 20);
    }
    off();
    let sum = |s: u64, e: u64| -> u64 {
        buf[((s - low) / 2) as usize..=((e - 1 - low) / 2) as usize]
            .iter()
            .map(|&c| u64::from(c))
            .sum()
    };
    let (in_a, in_b) = (sum(a0, a1), sum(b0, b1));
    let share = in_a as f64 / (in_a + in_b).max(1) as f64 * 100.0;
    println!(
        "proftest: time shares: {in_a} samples in A, {in_b} in B: A has {share:.1}% (want 75%)"
    );
    ensure!(
        in_a + in_b >= 500,
        "only {} samples in 2000 ticks",
        in_a + in_b
    );
    ensure!(
        (70.0..=80.0).contains(&share),
        "A got {share:.1}% of the samples, want 75 +- 5"
    );
    Ok(())
}

/// CPU ticks of the calling thread (CLOCK_THREAD_CPUTIME_ID).
fn thread_ticks() -> u64 {
    spin::thread_ticks(sys::kinfo().map_or(1000, |k| k.hz))
}

/// What a spinning thread reports: its CPU ticks when done.
static TICKS_A: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
static TICKS_B: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How many more times each spinning thread asked how long it had run
/// (`spin::for_cpu_ticks`): each time, a late tick may land outside its loop.
static ASKED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

extern "C" fn spin_thread_a(ticks: usize) {
    let asked = spin_a(ticks as u64);
    ASKED.fetch_add(asked, core::sync::atomic::Ordering::Relaxed);
    TICKS_A.store(thread_ticks(), core::sync::atomic::Ordering::Release);
}

extern "C" fn spin_thread_b(ticks: usize) {
    let asked = spin::for_cpu_ticks(loop_b, ticks as u64);
    ASKED.fetch_add(asked, core::sync::atomic::Ordering::Relaxed);
    TICKS_B.store(thread_ticks(), core::sync::atomic::Ordering::Release);
}

/// The histogram over loop A and loop B: (buffer, low pc).
fn buffer_over_both_loops() -> (Vec<u16>, u64) {
    let (a0, a1) = spin::range_a();
    let (b0, b1) = spin::range_b();
    let low = a0.min(b0);
    (vec![0u16; ((a1.max(b1) - low) / 2 + 2) as usize], low)
}

/// Samples in `buf` (starting at pc `low`, scale 1:1) for pcs in `range`.
fn samples_in(buf: &[u16], low: u64, (start, end): (u64, u64)) -> u64 {
    buf[((start - low) / 2) as usize..=((end - 1 - low) / 2) as usize]
        .iter()
        .map(|&c| u64::from(c))
        .sum()
}

/// OSF/1: "each will be independently sampled and the counts will reflect
/// the sum of the samples for all of the threads". Two threads spin at once,
/// in loop A and loop B; each loop's samples must be the CPU ticks its
/// thread ran (CLOCK_THREAD_CPUTIME_ID), give or take the ticks its start
/// and end can take outside the loop, and every sample must be in the one
/// buffer.
fn threads_are_sampled_and_summed() -> Outcome {
    let (mut buf, low) = buffer_over_both_loops();
    sys::profil(&mut buf, low, 65536).map_err(|e| e.name())?;
    // Each spins until it has run 300 ticks of its own.
    let a = libc_lite::thread::spawn(spin_thread_a, 300).map_err(|e| e.name())?;
    let b = libc_lite::thread::spawn(spin_thread_b, 300).map_err(|e| e.name())?;
    a.join();
    b.join();
    let s = stat();
    off();
    let (in_a, in_b) = (
        samples_in(&buf, low, spin::range_a()),
        samples_in(&buf, low, spin::range_b()),
    );
    let ticks_a = TICKS_A.load(core::sync::atomic::Ordering::Acquire);
    let ticks_b = TICKS_B.load(core::sync::atomic::Ordering::Acquire);
    println!(
        "proftest: two threads: loop A {in_a} samples, ran {ticks_a} ticks; \
         loop B {in_b} samples, ran {ticks_b} ticks; {} samples in all, {} dropped",
        s.samples, s.dropped
    );
    ensure!(
        ticks_a >= 100 && ticks_b >= 100,
        "a thread hardly ran: {ticks_a}, {ticks_b} ticks"
    );
    let slack = 3 + ASKED.load(core::sync::atomic::Ordering::Relaxed);
    ensure!(
        in_a.abs_diff(ticks_a) <= slack && in_b.abs_diff(ticks_b) <= slack,
        "samples do not match the ticks each thread ran (allowing {slack}: the spins asked again)"
    );
    ensure!(
        total(&buf) == s.samples && s.applied > 0,
        "the buffer holds {} samples, profstat counted {}",
        total(&buf),
        s.samples
    );
    Ok(())
}

/// Each twin thread's CPU ticks when it is done spinning in loop A.
static TWIN_TICKS: [core::sync::atomic::AtomicU64; 2] = [
    core::sync::atomic::AtomicU64::new(0),
    core::sync::atomic::AtomicU64::new(0),
];
/// How long each twin spins, in ticks of its own (`spin::for_cpu_ticks`).
static TWIN_SPIN: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

extern "C" fn spin_twin(slot: usize) {
    let asked = spin_a(TWIN_SPIN.load(core::sync::atomic::Ordering::Acquire));
    ASKED.fetch_add(asked, core::sync::atomic::Ordering::Relaxed);
    TWIN_TICKS[slot].store(thread_ticks(), core::sync::atomic::Ordering::Release);
}

/// Runs two threads in loop A at once (on two CPUs when the machine has
/// them) with profiling on into the one-bin buffer `bin`, each spinning
/// `ticks` of its own; returns the CPU ticks each ran.
fn twins_in_loop_a(bin: &mut [u16; 1], ticks: u64) -> Result<(u64, u64), alloc::string::String> {
    let (start, end) = spin::range_a();
    // The widest bin whose first half-word is loop A's first and that still
    // holds its last: scale * ((end - 1 - start) / 2) < 65536.
    let scale = (65536 / ((end - 1 - start) / 2 + 1)) as u32;
    TWIN_SPIN.store(ticks, core::sync::atomic::Ordering::Release);
    sys::profil(bin, start, scale).map_err(|e| e.name())?;
    let one = libc_lite::thread::spawn(spin_twin, 0).map_err(|e| e.name())?;
    let two = libc_lite::thread::spawn(spin_twin, 1).map_err(|e| e.name())?;
    one.join();
    two.join();
    Ok((
        TWIN_TICKS[0].load(core::sync::atomic::Ordering::Acquire),
        TWIN_TICKS[1].load(core::sync::atomic::Ordering::Acquire),
    ))
}

/// Two threads at the same pc, sampled at the same moments on two CPUs,
/// add to the same 16-bit bin: the add is one atomic read-modify-write
/// (`lock cmpxchg`), so no count is lost and the bin is the sum of the
/// ticks both ran; two adds that race near the top still stop at exactly
/// 65535, neither wrapping nor stopping short.
fn threads_at_one_pc_sum_into_one_bin() -> Outcome {
    let mut bin = [0u16; 1];
    // Each runs 200 ticks of its own, however little of the host a busy
    // machine leaves it (400 ticks of TSC time once gave one thread 88).
    ASKED.store(0, core::sync::atomic::Ordering::Relaxed);
    let (one, two) = twins_in_loop_a(&mut bin, 200)?;
    let s = stat();
    off();
    let counted = u64::from(bin[0]);
    println!(
        "proftest: one bin, two threads: {counted} samples, the threads ran {one} + {two} ticks; {} dropped",
        s.dropped
    );
    ensure!(
        one >= 100 && two >= 100,
        "a thread hardly ran: {one}, {two} ticks"
    );
    // Each thread's start and end (outside the loop) may take a tick or
    // three, as in threads_are_sampled_and_summed, and so may each time a
    // spin asked again how long it had run.
    let slack = 6 + ASKED.load(core::sync::atomic::Ordering::Relaxed);
    ensure!(
        counted.abs_diff(one + two) <= slack,
        "the bin has {counted} samples for {} ticks",
        one + two
    );
    ensure!(
        counted == s.samples,
        "the bin has {counted}, profstat counted {} samples",
        s.samples
    );

    let mut bin = [65535 - 50u16; 1];
    let (one, two) = twins_in_loop_a(&mut bin, 100)?;
    let s = stat();
    off();
    // 50 samples reach the top; more race there.
    ensure!(
        s.samples >= 60 && one + two >= 60,
        "too few samples to reach the top: {} ({one} + {two} ticks)",
        s.samples
    );
    ensure!(
        bin[0] == 65535,
        "from 65485 with {} samples, the bin is {}",
        s.samples,
        bin[0]
    );
    Ok(())
}

extern "C" fn spin_briefly_then_exit(ticks: usize) {
    spin::for_cpu_ticks(loop_b, ticks as u64);
}

/// A thread's exit does not stop profiling: its samples stay, and the
/// process goes on being sampled.
fn a_thread_exit_keeps_profiling_on() -> Outcome {
    let (mut buf, low) = buffer_over_both_loops();
    sys::profil(&mut buf, low, 65536).map_err(|e| e.name())?;
    libc_lite::thread::spawn(spin_briefly_then_exit, 50)
        .map_err(|e| e.name())?
        .join();
    let after_exit = stat();
    spin::for_cpu_ticks(loop_a, 50);
    let s = stat();
    off();
    let (in_a, in_b) = (
        samples_in(&buf, low, spin::range_a()),
        samples_in(&buf, low, spin::range_b()),
    );
    ensure!(
        after_exit.on == 1,
        "profiling stopped when a thread exited ({after_exit:?})"
    );
    ensure!(
        in_b >= 30,
        "the exited thread's samples are gone: {in_b} in loop B"
    );
    ensure!(
        in_a >= 30,
        "the main thread was not sampled after: {in_a} in loop A"
    );
    ensure!(
        total(&buf) == s.samples,
        "buffer {} != samples {}",
        total(&buf),
        s.samples
    );
    Ok(())
}

extern "C" fn turn_profiling_off(_: usize) {
    let _ = sys::profil_raw(0, 0, 0, 0);
}

/// profil belongs to the process: turned on by one thread, off by another,
/// it is off for both.
fn profil_off_in_another_thread_is_off_for_all() -> Outcome {
    let (mut buf, low) = buffer_over_both_loops();
    sys::profil(&mut buf, low, 65536).map_err(|e| e.name())?;
    spin_a(20);
    libc_lite::thread::spawn(turn_profiling_off, 0)
        .map_err(|e| e.name())?
        .join();
    let s = stat();
    let before = total(&buf);
    spin_a(30);
    let after = total(&buf);
    off();
    ensure!(
        s.on == 0 && s.stopped_by == PROF_STOPPED_BY_CALL,
        "another thread's profil(0) left it {s:?}"
    );
    ensure!(
        before > 0 && after == before,
        "counts went from {before} to {after} while off"
    );
    Ok(())
}

fn the_tick_rate_is_reported() -> Outcome {
    let hz = sys::kinfo().map_err(|e| e.name())?.hz;
    let clktck = libc_lite::env::auxv(AT_CLKTCK);
    ensure!(
        clktck == Some(hz),
        "AT_CLKTCK is {clktck:?}, kinfo says {hz} Hz"
    );
    ensure!((100..=10_000).contains(&hz), "hz {hz} outside 100..=10000");
    println!("proftest: tick rate {hz} Hz (AT_CLKTCK and kinfo agree)");
    Ok(())
}

/// `/proc/self/profil` tells in words what profstat tells in numbers: on
/// with one region and its scale while profiling, the ticks counted, and
/// why it stopped once it has.
fn proc_profil_tells_the_state() -> Outcome {
    let text = |what: &str| -> Result<alloc::string::String, alloc::string::String> {
        let bytes = sys::read_file("/proc/self/profil")
            .map_err(|e| format!("{what}: /proc/self/profil: {}", e.message()))?;
        Ok(alloc::string::String::from_utf8_lossy(&bytes).into_owned())
    };
    let mut buf = vec![0u16; 4096];
    let offset = spin::range_a().0;
    sys::profil(&mut buf, offset, 0x8000).map_err(|e| e.name())?;
    spin_a(20);
    let on = text("on")?;
    let counted = stat().samples;
    off();
    let after = text("off")?;
    ensure!(
        on.contains("state:    on\n") && on.contains("regions:  1\n"),
        "while on it said:\n{on}"
    );
    ensure!(
        on.contains(&format!("offset {offset:#x}, scale 0x8000")),
        "the region is not shown as given (offset {offset:#x}, scale 0x8000):\n{on}"
    );
    let samples = on
        .lines()
        .find_map(|l| l.strip_prefix("samples:"))
        .and_then(|n| n.trim().parse::<u64>().ok());
    ensure!(
        samples.is_some_and(|n| n > 0 && n <= counted),
        "samples {samples:?}, profstat says {counted} a moment later"
    );
    ensure!(
        after.contains("state:    off (turned off by profil)\n") && after.contains("regions:  0\n"),
        "after profil(0) it said:\n{after}"
    );
    Ok(())
}

const TESTS: &[Test] = user::tests![
    bin_relation_is_exact,
    proc_profil_tells_the_state,
    pc_below_offset_is_dropped,
    bin_past_the_buffer_is_dropped,
    scale_0_turns_profiling_off,
    scale_above_65536_is_einval_and_keeps_the_old_state,
    a_bad_buffer_is_efault_and_leaves_profiling_off,
    size_0_and_1_are_accepted_and_count_nothing,
    a_fault_at_tick_time_turns_profiling_off_silently,
    fork_child_inherits_and_counts_into_its_own_copy,
    exec_turns_profiling_off,
    a_failed_exec_keeps_profiling_on,
    exit_turns_profiling_off,
    bins_saturate_at_65535,
    system_time_is_charged_to_the_syscall_site,
    multi_region_form,
    multi_region_edges,
    time_shares_show_in_the_histogram,
    the_tick_rate_is_reported,
    threads_are_sampled_and_summed,
    threads_at_one_pc_sum_into_one_bin,
    a_thread_exit_keeps_profiling_on,
    profil_off_in_another_thread_is_off_for_all,
];

fn run() -> i32 {
    let (passed, failed) = user::harness::run("proftest", TESTS);
    if let Ok(c) = sys::profcost() {
        println!(
            "proftests: profil cost in TSC cycles: tick median {} p99 {} ({} samples); update median {} p99 {} ({} samples)",
            c.tick_median, c.tick_p99, c.tick_samples, c.apply_median, c.apply_p99, c.apply_samples
        );
    }
    println!("proftests: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}
