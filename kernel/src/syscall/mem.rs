//! Memory calls: brk, mmap, munmap, mremap, mprotect on the current process.

use super::SysResult;
use crate::proc::current;
use crate::proc::vm::UserMemory;
use kcore::rlimit::Limits;

/// Runs `f` on the caller's memory and resource limits.
fn with_memory<R>(f: impl FnOnce(&mut UserMemory, &Limits) -> R) -> R {
    current(|p| {
        let mem = p.mem.as_mut().expect("a running process has memory");
        f(mem, &p.limits)
    })
}

/// Linux's brk returns the (possibly unchanged) break, never an error.
pub fn brk(addr: u64) -> SysResult {
    Ok(with_memory(|m, l| m.set_brk(addr, l)) as usize)
}

pub fn mmap(addr: u64, len: u64, prot: u32, flags: u32, fd: i64) -> SysResult {
    with_memory(|m, l| m.mmap(addr, len, prot, flags, fd, l)).map(|a| a as usize)
}

pub fn munmap(addr: u64, len: u64) -> SysResult {
    with_memory(|m, _| m.munmap(addr, len)).map(|()| 0)
}

pub fn mremap(old: u64, old_len: u64, new_len: u64, flags: u32) -> SysResult {
    with_memory(|m, l| m.mremap(old, old_len, new_len, flags, l)).map(|a| a as usize)
}

pub fn mprotect(addr: u64, len: u64, prot: u32) -> SysResult {
    with_memory(|m, _| m.mprotect(addr, len, prot)).map(|()| 0)
}
