//! Pure logic of the kernel, with no hardware access, so `cargo test` checks it
//! on the host: boot options, address-space layout randomisation's offsets, the buffer cache's bookkeeping, ext2 and its journal, PCI and virtio records, the cpio archive format of the ramdisk, ELF
//! parsing (static and dynamic programs) and the layout of a core file, user and group ids and file permissions, frame bookkeeping, record locks, paths, profil bin arithmetic, gmon encoding,
//! signal rules, symbols, clone and futex rules, how socket(2) refuses the Internet families, what wait4 and waitid report, time conversions,
//! timekeeping and the vDSO's clock page, what login reads from /etc/passwd, the W^X
//! rule over frames, the areas of an address space, the random-number
//! generator, resource limits, nice weights, the kernel log as syslog(2) and /dev/kmsg give it, the text of `/proc` and System V IPC's rules
//! (keys, ids, permissions, semop, which message msgrcv takes), and the
//! quartiles and cost ratio `profcompare` reports.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod acpi;
pub mod aslr;
pub mod bcache;
pub mod bootopts;
pub mod bytes;
pub mod coredump;
pub mod cpio;
pub mod cpuclock;
pub mod cred;
pub mod dirread;
pub mod elf;
pub mod eventfd;
pub mod ext2;
pub mod flock;
pub mod frames;
pub mod gmon;
pub mod holes;
pub mod inet;
pub mod ipc;
pub mod kmsg;
pub mod login;
pub mod nice;
pub mod path;
pub mod pci;
pub mod policy;
pub mod procfs;
pub mod profil;
pub mod random;
pub mod rlimit;
pub mod script;
pub mod signal;
pub mod spread;
pub mod symbols;
pub mod thread;
pub mod time;
pub mod tty;
pub mod vdso;
pub mod virtio;
pub mod vma;
pub mod wait;
pub mod wx;
pub mod xattr;
