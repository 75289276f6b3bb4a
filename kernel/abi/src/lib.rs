//! The one table of everything the kernel and user space must agree on.
//!
//! System call numbers, errno values, flags and structure layouts live here and
//! nowhere else: the kernel dispatches on these constants and libc-lite issues
//! them. Where Linux x86_64 has a call, we use Linux's number and layout, so a
//! static Linux binary that only uses those calls runs unchanged. Our own calls
//! (profil and the teaching/introspection calls) are numbered from 1000 up,
//! well outside Linux's table. `docs/syscalls.md` lists the same table in prose.

#![no_std]
#![forbid(unsafe_code)]

pub mod errno;
pub mod ipc;
pub mod signal;
pub mod socket;
pub mod sys;
pub mod types;

#[cfg(test)]
mod linux_layouts;

pub use errno::Errno;
