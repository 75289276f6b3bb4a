//! The character devices of `/dev`, made at boot before the ramdisk is read.
//!
//! | name | does | Linux's numbers |
//! |---|---|---|
//! | `console` | the serial console (`fs/console.rs`) | 5, 1 |
//! | `tty` | the process's controlling terminal: here always the console, since the kernel has one terminal and no sessions (`setsid`) yet | 5, 0 |
//! | `null` | reads find end of file, writes vanish | 1, 3 |
//! | `zero` | reads find zero bytes, writes vanish | 1, 5 |
//! | `full` | reads find zero bytes, writes fail with ENOSPC (a disk that is full, for testing error paths) | 1, 7 |
//! | `random`, `urandom` | the kernel's generator (`random.rs`); writes are mixed into it | 1, 8 and 1, 9 |
//!
//! `random` and `urandom` are the same, as on Linux since 5.6: the generator
//! is seeded before the first process runs, so neither ever blocks.
//!
//! A device is a `ramfs::Content::Device` node, so `stat`, `ls` and `open`
//! treat it like any other name; what reading and writing do is here.

use abi::Errno;

use super::console;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Console,
    Tty,
    Null,
    Zero,
    Full,
    Random,
    Urandom,
    /// The kernel's log so far (`log::read_ring`), read from the open
    /// file's offset.
    Klog,
}

/// Every device, its name in `/dev` and its permission bits.
pub const ALL: [(&str, Device, u32); 8] = [
    ("console", Device::Console, 0o620),
    ("tty", Device::Tty, 0o666),
    ("null", Device::Null, 0o666),
    ("zero", Device::Zero, 0o666),
    ("full", Device::Full, 0o666),
    ("random", Device::Random, 0o666),
    ("urandom", Device::Urandom, 0o666),
    ("klog", Device::Klog, 0o444),
];

impl Device {
    /// A terminal: reads sleep for typed input; ioctl speaks termios.
    pub fn is_terminal(self) -> bool {
        matches!(self, Device::Console | Device::Tty)
    }

    /// `st_rdev`: Linux's major and minor numbers, encoded as glibc's and
    /// musl's `makedev` do for numbers this small.
    pub fn rdev(self) -> u64 {
        let (major, minor) = match self {
            Device::Console => (5, 1),
            Device::Tty => (5, 0),
            Device::Null => (1, 3),
            Device::Zero => (1, 5),
            Device::Full => (1, 7),
            Device::Random => (1, 8),
            Device::Urandom => (1, 9),
            // Linux's /dev/kmsg is (1, 11); klog reads as a plain file
            // rather than record by record, so it takes a minor of its own.
            Device::Klog => (1, 250),
        };
        (major << 8) | minor
    }

    /// Reads into `buf`. A terminal read may sleep, so the caller holds no
    /// lock. A device with a position (`/dev/klog`) reads from `*at` and
    /// moves it; the others leave it alone.
    pub fn read(self, buf: &mut [u8], at: &mut u64) -> Result<usize, Errno> {
        match self {
            Device::Klog => {
                let (n, next) = crate::log::read_ring(*at, buf);
                *at = next;
                Ok(n)
            }
            Device::Console | Device::Tty => console::read(buf),
            Device::Null => Ok(0),
            Device::Zero | Device::Full => {
                buf.fill(0);
                Ok(buf.len())
            }
            Device::Random | Device::Urandom => {
                crate::random::fill(buf);
                Ok(buf.len())
            }
        }
    }

    pub fn write(self, buf: &[u8]) -> Result<usize, Errno> {
        match self {
            Device::Klog => Err(Errno::EINVAL),
            Device::Console | Device::Tty => Ok(console::write(buf)),
            Device::Null | Device::Zero => Ok(buf.len()),
            Device::Full => Err(Errno::ENOSPC),
            Device::Random | Device::Urandom => {
                crate::random::mix(buf);
                Ok(buf.len())
            }
        }
    }

    /// poll(2): a terminal is readable when a line (or, raw, a byte) is
    /// waiting; every other device always is, and is always writable.
    pub fn poll(self) -> i16 {
        use abi::types::{POLLIN, POLLOUT};
        if self.is_terminal() && !console::readable() {
            POLLOUT
        } else {
            POLLIN | POLLOUT
        }
    }
}
