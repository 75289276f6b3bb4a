//! The one path between user memory and the kernel.
//!
//! No other kernel code dereferences a user pointer. A copy checks only what
//! is cheap first (the range lies below `USER_TOP` and does not wrap), then
//! moves the bytes with `rep movsq` (then `rep movsb` for the last few) and
//! lets the page tables judge, as Linux's `copy_from_user` does: almost
//! always every page is there with the rights the copy needs, and the copy
//! costs no walk of the page tables. If a page is not, the copy faults;
//! `trap.rs` sends a kernel fault at either instruction to its fixup (an
//! exception table, as in Linux and the BSDs: `fixup_for`), the copy
//! returns how much it did not move, and only then is the page at the stop
//! looked at as a user access would be (`check_range`): a page not there
//! yet is filled on demand if an area holds it (mm/areas.rs), a
//! copy-on-write page is given its own frame for a write, and then the copy
//! goes on from where it stopped; anything else is `EFAULT`. This holds because every page the kernel can reach below
//! `USER_TOP` is a page the user may reach too: user pages are mapped
//! user-accessible, and a `PROT_NONE` one is not present at all
//! (mm/paging.rs, `NO_ACCESS`), so no copy can read what the user could not;
//! CR0.WP makes a read-only page fault for the kernel's writes as well.
//! With SMAP on (arch/protect.rs) the copy's two instructions, profil's
//! `lock cmpxchg` and the futex word's are the only places the kernel may
//! touch a user page: `stac` before, `clac` after.
//!
//! Where nothing may move before the whole range is known good (`read`
//! from a pipe must not consume data it then cannot deliver; profil checks
//! its buffer when called), the caller asks `check_range` first: it walks
//! the page tables over the range and does what a fault would.
//!
//! Three more instructions have fixups: `probe_read` and `probe_write`, which
//! the self-tests use to show that a protection holds (a kernel write to its
//! own text, a kernel read of a user page outside the window) without
//! bringing the kernel down, and `probe_load`, with which a crash report
//! reads the code at the faulting rip, which may itself not be mapped.

use abi::Errno;
use alloc::string::String;
use alloc::vec::Vec;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use super::paging::{COW, Space};
use super::{PAGE_SIZE, USER_TOP};

core::arch::global_asm!(
    r#"
    .section .text.uaccess, "ax"
    .global uaccess_copy
    .global uaccess_copy_insn
    .global uaccess_copy_bytes_insn
    .global uaccess_copy_done
    .global uaccess_copy_quads_fault
uaccess_copy:
    movq %rdx, %rcx
    shrq $3, %rcx
    andl $7, %edx
    cmpb $0, SMAP_ENABLED(%rip)
    je 1f
    stac
1:
uaccess_copy_insn:
    rep movsq
    movq %rdx, %rcx
uaccess_copy_bytes_insn:
    rep movsb
uaccess_copy_done:
    cmpb $0, SMAP_ENABLED(%rip)
    je 2f
    clac
2:
    movq %rcx, %rax
    ret
uaccess_copy_quads_fault:
    leaq (%rdx,%rcx,8), %rcx
    jmp uaccess_copy_done

    .global uaccess_add_u16
    .global uaccess_add_u16_load
    .global uaccess_add_u16_store
    .global uaccess_add_u16_fault
uaccess_add_u16:
    cmpb $0, SMAP_ENABLED(%rip)
    je 1f
    stac
1:
    xorl %ecx, %ecx
uaccess_add_u16_load:
    movzwl (%rdi), %eax
2:
    leal (%rax,%rsi), %edx
    cmpl $65535, %edx
    jbe 3f
    movl $65535, %edx
3:
uaccess_add_u16_store:
    lock cmpxchgw %dx, (%rdi)
    jne 2b
4:
    cmpb $0, SMAP_ENABLED(%rip)
    je 5f
    clac
5:
    movl %ecx, %eax
    ret
uaccess_add_u16_fault:
    movl $1, %ecx
    jmp 4b

    .global uaccess_cmpxchg_u32
    .global uaccess_cmpxchg_u32_insn
    .global uaccess_cmpxchg_u32_fault
uaccess_cmpxchg_u32:
    cmpb $0, SMAP_ENABLED(%rip)
    je 1f
    stac
1:
    movl %esi, %eax
uaccess_cmpxchg_u32_insn:
    lock cmpxchgl %edx, (%rdi)
2:
    cmpb $0, SMAP_ENABLED(%rip)
    je 3f
    clac
3:
    ret
uaccess_cmpxchg_u32_fault:
    movabsq $0x100000000, %rax
    jmp 2b

    .global probe_read
    .global probe_read_insn
    .global probe_write
    .global probe_write_insn
    .global probe_fault
probe_read:
    xorl %eax, %eax
probe_read_insn:
    movb (%rdi), %cl
    ret
probe_write:
    xorl %eax, %eax
    movb (%rdi), %cl
probe_write_insn:
    movb %cl, (%rdi)
    ret
probe_fault:
    movl $1, %eax
    ret

    .global probe_load
    .global probe_load_insn
    .global probe_load_fault
probe_load:
probe_load_insn:
    movzbl (%rdi), %eax
    ret
probe_load_fault:
    movl $0xffffffff, %eax
    ret
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    /// Copies `len` bytes, eight at a time and then the rest (under TCG each
    /// step of a `rep` is emulated on its own, so `rep movsb` cost eight
    /// times as many); returns how many were NOT copied (0 on success). A
    /// fault in the eight-byte part stops at a word that may straddle two
    /// pages.
    fn uaccess_copy(dst: *mut u8, src: *const u8, len: usize) -> usize;
    fn uaccess_copy_insn();
    fn uaccess_copy_bytes_insn();
    fn uaccess_copy_done();
    fn uaccess_copy_quads_fault();
    /// Adds `n` (at most 65535) to the 16-bit counter at `addr`, saturating
    /// at 65535, in one atomic read-modify-write (`lock cmpxchg`, so that
    /// adds from several CPUs are never lost); returns 1 if it faulted
    /// (then nothing was added), else 0.
    fn uaccess_add_u16(addr: u64, n: u64) -> u64;
    fn uaccess_add_u16_load();
    fn uaccess_add_u16_store();
    fn uaccess_add_u16_fault();
    /// Compares the 32-bit word at `addr` with `expected` and stores `new`
    /// there if they are equal, in one atomic step; returns the value it
    /// found (zero-extended), or 1 << 32 if the access faulted (then
    /// nothing was stored).
    fn uaccess_cmpxchg_u32(addr: u64, expected: u32, new: u32) -> u64;
    fn uaccess_cmpxchg_u32_insn();
    fn uaccess_cmpxchg_u32_fault();
    /// Reads a byte at `addr`; returns 1 if that faulted, else 0.
    fn probe_read(addr: u64) -> u64;
    fn probe_read_insn();
    /// Writes the byte at `addr` back to itself; returns 1 if that faulted.
    fn probe_write(addr: u64) -> u64;
    fn probe_write_insn();
    fn probe_fault();
    /// The byte at `addr`, or `u32::MAX` if reading it faulted.
    fn probe_load(addr: u64) -> u32;
    fn probe_load_insn();
    fn probe_load_fault();
}

/// Where a fault at `rip` should resume, if `rip` is an instruction with a
/// fixup (the user copy, the two probes).
pub fn fixup_for(rip: u64) -> Option<u64> {
    let at = |f: unsafe extern "C" fn()| f as *const () as u64;
    if rip == at(uaccess_copy_insn) {
        Some(at(uaccess_copy_quads_fault))
    } else if rip == at(uaccess_copy_bytes_insn) {
        Some(at(uaccess_copy_done))
    } else if rip == at(uaccess_add_u16_load) || rip == at(uaccess_add_u16_store) {
        Some(at(uaccess_add_u16_fault))
    } else if rip == at(uaccess_cmpxchg_u32_insn) {
        Some(at(uaccess_cmpxchg_u32_fault))
    } else if rip == at(probe_read_insn) || rip == at(probe_write_insn) {
        Some(at(probe_fault))
    } else if rip == at(probe_load_insn) {
        Some(at(probe_load_fault))
    } else {
        None
    }
}

/// Whether the kernel can read the byte at `addr` (outside any SMAP window).
/// For self-tests of the protections; never for user pointers.
pub fn kernel_can_read(addr: u64) -> bool {
    // SAFETY: a fault is caught by the fixup and reported as 1.
    unsafe { probe_read(addr) == 0 }
}

/// The byte at the kernel address `addr`, or None if it is not mapped (or
/// is a user page outside a SMAP window): for crash reports, which read
/// the code at a faulting rip. `addr` must be canonical: a non-canonical
/// address faults with #GP, which has no fixup.
pub fn kernel_read_byte(addr: u64) -> Option<u8> {
    // SAFETY: a page fault is caught by the fixup and reported as
    // u32::MAX; the caller gives a canonical address (no #GP).
    u8::try_from(unsafe { probe_load(addr) }).ok()
}

/// Whether the kernel can write the byte at `addr` (it writes the same
/// value back, so success changes nothing). For self-tests only.
pub fn kernel_can_write(addr: u64) -> bool {
    // SAFETY: as in kernel_can_read; the byte written is the one read.
    unsafe { probe_write(addr) == 0 }
}

/// Copies from `src` with no page-table check, relying on the fault fixup
/// alone; returns the bytes not copied. Only the self-test uses this, to show
/// that a fault inside the copy is recovered.
pub fn copy_relying_on_fixup(dst: &mut [u8], src: u64) -> usize {
    // SAFETY: a fault while reading `src` is caught by the fixup; `dst` is a
    // valid kernel buffer.
    unsafe { uaccess_copy(dst.as_mut_ptr(), src as *const u8, dst.len()) }
}

/// Checks that `[addr, addr + len)` is user memory the process may read (or
/// write), filling pages on demand and breaking copy-on-write sharing for
/// writes, as the user's own accesses would. For callers that must know
/// before any byte moves; a copy needs no check first.
pub fn check_range(addr: u64, len: usize, write: bool) -> Result<(), Errno> {
    if len == 0 {
        return Ok(());
    }
    let end = addr.checked_add(len as u64).ok_or(Errno::EFAULT)?;
    if end > USER_TOP {
        return Err(Errno::EFAULT);
    }
    let space = Space::current();
    let mut page = addr & !(PAGE_SIZE - 1);
    while page < end {
        if space.translate(VirtAddr::new(page)).is_none() {
            super::areas::fault_in(&space, page, write)?;
        }
        let (_, flags) = space.translate(VirtAddr::new(page)).ok_or(Errno::EFAULT)?;
        if !flags.contains(Flags::USER_ACCESSIBLE) {
            return Err(Errno::EFAULT);
        }
        if write && !flags.contains(Flags::WRITABLE) {
            if !flags.contains(COW) {
                return Err(Errno::EFAULT);
            }
            space.break_cow(page).map_err(|_| Errno::EFAULT)?;
        }
        page += PAGE_SIZE;
    }
    Ok(())
}

/// Runs `copy` (which moves `count` bytes of a user range starting at
/// `addr`, from byte `from` on, and returns how many it did not move, as
/// `uaccess_copy`) until all `len` bytes have moved. Where it stops, the
/// page is made ready as a user access would make it (`check_range`);
/// where that fails, the bytes before the fault are moved one at a time, so
/// that the error says exactly how far the copy got: `Err((EFAULT, moved))`.
fn copy_checking_faults(
    addr: u64,
    len: usize,
    write: bool,
    mut copy: impl FnMut(usize, usize) -> usize,
) -> Result<(), (Errno, usize)> {
    if len == 0 {
        return Ok(());
    }
    addr.checked_add(len as u64)
        .filter(|&end| end <= USER_TOP)
        .ok_or((Errno::EFAULT, 0))?;
    let mut from = 0;
    let mut readied = None;
    loop {
        let stopped = len - copy(from, len - from);
        if stopped == len {
            return Ok(());
        }
        // The access that faulted is at most a word (uaccess_copy), which
        // may reach into the next page: ready all of it. The same word
        // again after its page was made ready means the page changed under
        // the copy or the page tables disagree with the check: EFAULT,
        // never a loop.
        let word = (len - stopped).min(8);
        let ready = if readied == Some(stopped) {
            Err(Errno::EFAULT)
        } else {
            check_range(addr + stopped as u64, word, write)
        };
        if let Err(e) = ready {
            // Fewer than eight bytes move one at a time (uaccess_copy), up
            // to the very byte that cannot.
            let exact = stopped + (word - 1) - copy(stopped, word - 1);
            return Err((e, exact));
        }
        readied = Some(stopped);
        from = stopped;
    }
}

/// Copies user memory at `src` into `dst`.
pub fn copy_from_user(dst: &mut [u8], src: u64) -> Result<(), Errno> {
    copy_from_user_until_fault(dst, src).map_err(|(e, _)| e)
}

/// Copies user memory at `src` into `dst`; if a fault stops it, the error
/// comes with how many bytes were copied before it (a `write` from a
/// buffer that goes bad part way writes those, as Linux's does).
pub fn copy_from_user_until_fault(dst: &mut [u8], src: u64) -> Result<(), (Errno, usize)> {
    copy_checking_faults(src, dst.len(), false, |from, count| {
        // SAFETY: `dst[from..from + count]` is a valid kernel buffer (the
        // caller keeps within `len`); the source lies below USER_TOP, so a
        // fault reading it can only be a user page's and is caught by the
        // fixup (the copy then reports what is left).
        unsafe {
            uaccess_copy(
                dst[from..from + count].as_mut_ptr(),
                (src + from as u64) as *const u8,
                count,
            )
        }
    })
}

/// Copies `src` to user memory at `dst`.
pub fn copy_to_user(dst: u64, src: &[u8]) -> Result<(), Errno> {
    copy_checking_faults(dst, src.len(), true, |from, count| {
        // SAFETY: as in copy_from_user_until_fault, writing: the destination
        // lies below USER_TOP, so the kernel can only touch user pages the
        // user may write (CR0.WP), and a fault is caught by the fixup.
        unsafe {
            uaccess_copy(
                (dst + from as u64) as *mut u8,
                src[from..from + count].as_ptr(),
                count,
            )
        }
    })
    .map_err(|(e, _)| e)
}

/// Adds `n` to the 16-bit counter at user address `addr`, saturating at
/// 65535, in one atomic read-modify-write: profil's bin update. The page is
/// made ready as for a copy if the first try faults.
pub fn add_to_u16_saturating(addr: u64, n: u64) -> Result<(), Errno> {
    if try_add_to_u16_saturating(addr, n) {
        return Ok(());
    }
    check_range(addr, 2, true)?;
    match try_add_to_u16_saturating(addr, n) {
        true => Ok(()),
        false => Err(Errno::EFAULT),
    }
}

/// `add_to_u16_saturating` without the second chance: one try, false if it
/// faulted (nothing added, nothing else done) or the counter is not below
/// `USER_TOP`. Safe in an interrupt handler: a fault here is only the
/// fixup's, which takes no lock, allocates nothing and never sleeps; the
/// page is left as it was for the caller to deal with later, in the
/// thread's own context.
pub fn try_add_to_u16_saturating(addr: u64, n: u64) -> bool {
    if addr.checked_add(2).is_none_or(|end| end > USER_TOP) {
        return false;
    }
    // SAFETY: both bytes of the counter lie below USER_TOP, so a fault can
    // only be a user page's, caught by the fixup (nothing is written then).
    unsafe { uaccess_add_u16(addr, n.min(u64::from(u16::MAX))) == 0 }
}

/// The futex word protocol's one step (priority-inheritance locks, whose
/// other side is user space's own atomics): if the aligned 32-bit word at
/// `addr` holds `expected`, stores `new` there, atomically. Returns the
/// value found (equal to `expected`: stored), or None if the word is not a
/// page the kernel can write now (not there yet, copy-on-write, or not
/// user memory): nothing was stored, and the caller, which may hold a
/// lock, makes the page ready with `check_range` after letting it go and
/// tries again. Like `try_add_to_u16_saturating`, it never sleeps.
pub fn try_cmpxchg_u32(addr: u64, expected: u32, new: u32) -> Option<u32> {
    if !addr.is_multiple_of(4) || addr.checked_add(4).is_none_or(|end| end > USER_TOP) {
        return None;
    }
    // SAFETY: the word lies below USER_TOP and is aligned, so the access is
    // one user page's, and a fault is caught by the fixup (nothing is
    // stored then).
    let found = unsafe { uaccess_cmpxchg_u32(addr, expected, new) };
    u32::try_from(found).ok()
}

/// Plain-data types that may be copied to and from user memory byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value and the type must have no padding
/// that could leak kernel bytes (or the padding must be zeroed by the caller).
pub unsafe trait Pod: Copy {}

// SAFETY: integers and these repr(C) structs of integers accept every bit
// pattern; their padding (Stat, Statx, StackT, SigInfo) is written
// as zero fields.
unsafe impl Pod for u8 {}
unsafe impl Pod for u16 {}
unsafe impl Pod for u32 {}
unsafe impl Pod for u64 {}
unsafe impl Pod for i32 {}
unsafe impl Pod for i64 {}
unsafe impl Pod for abi::types::KInfo {}
unsafe impl Pod for abi::types::ProcInfo {}
unsafe impl Pod for abi::types::Stat {}
unsafe impl Pod for abi::types::Statx {}
unsafe impl Pod for abi::types::Timespec {}
unsafe impl Pod for abi::types::SchedParam {}
unsafe impl Pod for abi::types::Utsname {}
unsafe impl Pod for abi::types::Prof {}
unsafe impl Pod for abi::types::ProfStat {}
unsafe impl Pod for abi::types::ProfCost {}
unsafe impl Pod for abi::types::KBench {}
unsafe impl Pod for abi::signal::SigAction {}
unsafe impl Pod for abi::signal::StackT {}
unsafe impl Pod for abi::signal::UContext {}
unsafe impl Pod for abi::signal::SigFrame {}
unsafe impl Pod for abi::signal::SigInfo {}
unsafe impl Pod for abi::signal::ItimerVal {}
unsafe impl Pod for abi::types::SysInfo {}
unsafe impl Pod for abi::types::RobustListHead {}
unsafe impl Pod for abi::types::FutexWaitv {}
unsafe impl Pod for abi::types::PollFd {}
unsafe impl Pod for abi::types::Rlimit {}
unsafe impl Pod for abi::types::Tms {}
unsafe impl Pod for abi::types::Rusage {}
unsafe impl Pod for abi::types::Termios {}
unsafe impl Pod for abi::types::Winsize {}
unsafe impl Pod for abi::types::Statfs {}
unsafe impl Pod for abi::types::Flock {}
unsafe impl Pod for abi::types::FOwnerEx {}
unsafe impl Pod for abi::types::Utimbuf {}
unsafe impl Pod for abi::types::CapHeader {}
unsafe impl Pod for abi::types::CapData {}
unsafe impl Pod for abi::socket::MsgHdr {}
unsafe impl Pod for abi::types::EpollEvent {}
unsafe impl Pod for abi::signal::Timeval {}
unsafe impl Pod for abi::ipc::MsqidDs {}
unsafe impl Pod for abi::ipc::SemidDs {}
unsafe impl Pod for abi::ipc::ShmidDs {}
unsafe impl Pod for abi::ipc::SemBuf {}
unsafe impl Pod for abi::ipc::MsgInfo {}
unsafe impl Pod for abi::ipc::SemInfo {}
unsafe impl Pod for abi::ipc::ShmInfo64 {}
unsafe impl Pod for abi::ipc::ShmUsage {}
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// Reads one `T` from user memory.
pub fn read<T: Pod>(addr: u64) -> Result<T, Errno> {
    let mut value = core::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: the slice covers exactly the (zeroed) value's bytes.
    let bytes =
        unsafe { core::slice::from_raw_parts_mut(value.as_mut_ptr().cast::<u8>(), size_of::<T>()) };
    copy_from_user(bytes, addr)?;
    // SAFETY: T is Pod, so any bytes make a valid value.
    Ok(unsafe { value.assume_init() })
}

/// Writes one `T` to user memory.
pub fn write<T: Pod>(addr: u64, value: &T) -> Result<(), Errno> {
    // SAFETY: a Pod value's bytes can be viewed as a byte slice.
    let bytes =
        unsafe { core::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) };
    copy_to_user(addr, bytes)
}

/// Reads a NUL-terminated string of at most `max` bytes (not counting the
/// NUL) that must be UTF-8 (EINVAL otherwise): a path, which this kernel's
/// file systems name in UTF-8.
pub fn read_cstr(addr: u64, max: usize) -> Result<String, Errno> {
    String::from_utf8(read_cbytes(addr, max)?).map_err(|_| Errno::EINVAL)
}

/// Reads a NUL-terminated string of at most `max` bytes (not counting the
/// NUL), whatever its bytes: exec's arguments and environment, which Linux
/// passes on as they are.
///
/// It copies 128 bytes at a time, never past the end of a page in one copy:
/// the string may end just before memory the process cannot read, and most
/// paths are short (copying to the page's end cost a 4 KiB copy per path).
pub fn read_cbytes(addr: u64, max: usize) -> Result<Vec<u8>, Errno> {
    const STEP: u64 = 128;
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(STEP) as usize;
        let mut buf = [0u8; STEP as usize];
        copy_from_user(&mut buf[..chunk], at)?;
        if let Some(nul) = buf[..chunk].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..nul]);
            break;
        }
        out.extend_from_slice(&buf[..chunk]);
        if out.len() > max {
            return Err(Errno::ENAMETOOLONG);
        }
        at = at.checked_add(chunk as u64).ok_or(Errno::EFAULT)?;
    }
    if out.len() > max {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(out)
}

/// Reads a NULL-terminated array of pointers (argv, envp): at most `max`
/// entries, else `E2BIG`. A null `addr` is an empty array.
pub fn read_ptr_array(addr: u64, max: usize) -> Result<Vec<u64>, Errno> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    loop {
        let at = addr
            .checked_add(8 * out.len() as u64)
            .ok_or(Errno::EFAULT)?;
        let ptr: u64 = read(at)?;
        if ptr == 0 {
            return Ok(out);
        }
        if out.len() == max {
            return Err(Errno::E2BIG);
        }
        out.push(ptr);
    }
}
