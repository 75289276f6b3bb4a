//! The one checked path between user memory and the kernel.
//!
//! No other kernel code dereferences a user pointer. Every copy first checks
//! the whole range against the running process's page tables: below
//! `USER_TOP`, no wrap-around, every page present and user-accessible, and
//! writable for writes (a page not there yet is filled on demand if an area
//! holds it, mm/areas.rs, and a copy-on-write page is first given its own
//! frame, as a fault would). Only then are the bytes copied, by one `rep movsb`
//! whose fault, should a page still vanish, is caught: `trap.rs` sends a kernel
//! fault at `uaccess_copy_insn` to `uaccess_copy_done` (an exception-table
//! fixup, as in Linux and the BSDs), and the copy reports `EFAULT`. With SMAP
//! on (arch/protect.rs) that instruction is the only place the kernel may
//! touch a user page: `stac` before it, `clac` after.
//!
//! Two more instructions have fixups: `probe_read` and `probe_write`, which
//! the self-tests use to show that a protection holds (a kernel write to its
//! own text, a kernel read of a user page outside the window) without
//! bringing the kernel down.

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
    .global uaccess_copy_done
uaccess_copy:
    movq %rdx, %rcx
    cmpb $0, SMAP_ENABLED(%rip)
    je 1f
    stac
1:
uaccess_copy_insn:
    rep movsb
uaccess_copy_done:
    cmpb $0, SMAP_ENABLED(%rip)
    je 2f
    clac
2:
    movq %rcx, %rax
    ret

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
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    /// Copies `len` bytes; returns how many were NOT copied (0 on success).
    fn uaccess_copy(dst: *mut u8, src: *const u8, len: usize) -> usize;
    fn uaccess_copy_insn();
    fn uaccess_copy_done();
    /// Reads a byte at `addr`; returns 1 if that faulted, else 0.
    fn probe_read(addr: u64) -> u64;
    fn probe_read_insn();
    /// Writes the byte at `addr` back to itself; returns 1 if that faulted.
    fn probe_write(addr: u64) -> u64;
    fn probe_write_insn();
    fn probe_fault();
}

/// Where a fault at `rip` should resume, if `rip` is an instruction with a
/// fixup (the user copy, the two probes).
pub fn fixup_for(rip: u64) -> Option<u64> {
    let at = |f: unsafe extern "C" fn()| f as *const () as u64;
    if rip == at(uaccess_copy_insn) {
        Some(at(uaccess_copy_done))
    } else if rip == at(probe_read_insn) || rip == at(probe_write_insn) {
        Some(at(probe_fault))
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
/// write), breaking copy-on-write sharing for writes.
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

/// Copies user memory at `src` into `dst`.
pub fn copy_from_user(dst: &mut [u8], src: u64) -> Result<(), Errno> {
    check_range(src, dst.len(), false)?;
    // SAFETY: the source range was checked to be mapped user memory; a fault
    // anyway is recovered by the fixup and reported below.
    let left = unsafe { uaccess_copy(dst.as_mut_ptr(), src as *const u8, dst.len()) };
    if left == 0 {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

/// Copies `src` to user memory at `dst`.
pub fn copy_to_user(dst: u64, src: &[u8]) -> Result<(), Errno> {
    check_range(dst, src.len(), true)?;
    // SAFETY: as in copy_from_user, with the range checked writable.
    let left = unsafe { uaccess_copy(dst as *mut u8, src.as_ptr(), src.len()) };
    if left == 0 {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

/// Plain-data types that may be copied to and from user memory byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value and the type must have no padding
/// that could leak kernel bytes (or the padding must be zeroed by the caller).
pub unsafe trait Pod: Copy {}

// SAFETY: integers and these repr(C) structs of integers accept every bit
// pattern; their padding (Stat, StackT, SigInfo) is written
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
unsafe impl Pod for abi::types::Timespec {}
unsafe impl Pod for abi::types::Utsname {}
unsafe impl Pod for abi::types::Prof {}
unsafe impl Pod for abi::types::ProfStat {}
unsafe impl Pod for abi::types::ProfCost {}
unsafe impl Pod for abi::signal::SigAction {}
unsafe impl Pod for abi::signal::StackT {}
unsafe impl Pod for abi::signal::UContext {}
unsafe impl Pod for abi::signal::SigFrame {}
unsafe impl Pod for abi::signal::ItimerVal {}
unsafe impl Pod for abi::types::SysInfo {}
unsafe impl Pod for abi::types::RobustListHead {}
unsafe impl Pod for abi::types::PollFd {}
unsafe impl Pod for abi::types::Rlimit {}
unsafe impl Pod for abi::types::Tms {}
unsafe impl Pod for abi::types::Rusage {}
unsafe impl Pod for abi::types::Termios {}
unsafe impl Pod for abi::types::Winsize {}
unsafe impl Pod for abi::types::Statfs {}
unsafe impl Pod for abi::types::Flock {}
unsafe impl Pod for abi::types::Utimbuf {}
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

/// Reads a NUL-terminated string of at most `max` bytes (not counting the NUL).
pub fn read_cstr(addr: u64, max: usize) -> Result<String, Errno> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let chunk = (PAGE_SIZE - at % PAGE_SIZE) as usize;
        let mut buf = [0u8; PAGE_SIZE as usize];
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
    String::from_utf8(out).map_err(|_| Errno::EINVAL)
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
