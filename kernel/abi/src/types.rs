//! Structure layouts and flag values shared by the kernel and user space.
//! Where Linux x86_64 defines one, the layout and values are Linux's.

/// What `kinfo()` reports: the machine as a test or `free`/`uptime` sees it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KInfo {
    /// Clock ticks since boot.
    pub ticks: u64,
    /// Ticks per second (the boot option `hz`).
    pub hz: u64,
    /// Physical frames (4 KiB) free right now.
    pub free_frames: u64,
    /// Physical frames the allocator manages in all.
    pub total_frames: u64,
    /// Frames the kernel heap has mapped (it grows, never shrinks), so a
    /// leak check can tell heap growth from lost frames.
    pub heap_frames: u64,
    /// Frames of kernel-half page tables made after boot (kept for reuse).
    pub kernel_table_frames: u64,
    /// TSC cycles per second, as calibrated at boot.
    pub tsc_per_sec: u64,
    /// Processes in the table (any state).
    pub processes: u64,
}

impl KInfo {
    /// Frames held by processes and files: all of them less the free ones,
    /// the kernel heap's and the kernel's page tables (both kept for reuse,
    /// never given back). A leak check compares this before and after.
    pub fn frames_in_use(&self) -> u64 {
        self.total_frames - self.free_frames - self.heap_frames - self.kernel_table_frames
    }
}

/// Process states as `proclist` reports them.
pub const PROC_RUNNABLE: u32 = 0;
pub const PROC_RUNNING: u32 = 1;
pub const PROC_SLEEPING: u32 = 2;
pub const PROC_ZOMBIE: u32 = 3;
pub const PROC_STOPPED: u32 = 4;
/// `ProcInfo::cpu` of a process with no thread left to run (a zombie).
pub const PROC_NO_CPU: u32 = u32::MAX;

/// One row of `proclist` (what `ps` prints).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: u32,
    /// Process group.
    pub pgid: u32,
    pub state: u32,
    /// Nonzero if profil is on for this process.
    pub profiling: u32,
    /// Threads the process has (1 for a single-threaded one, 0 for a
    /// zombie).
    pub threads: u32,
    /// The CPU its leader thread runs on, or last ran on (Linux's `PSR`,
    /// field 39 of /proc/PID/stat); `PROC_NO_CPU` for a zombie.
    pub cpu: u32,
    pub pad: u32,
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// Program name, NUL-padded.
    pub name: [u8; 32],
}

/// Linux's `struct stat` on x86_64.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_nlink: u64,
    pub st_mode: u32,
    pub st_uid: u32,
    pub st_gid: u32,
    pub pad0: u32,
    pub st_rdev: u64,
    pub st_size: i64,
    pub st_blksize: i64,
    pub st_blocks: i64,
    pub st_atime: i64,
    pub st_atime_nsec: i64,
    pub st_mtime: i64,
    pub st_mtime_nsec: i64,
    pub st_ctime: i64,
    pub st_ctime_nsec: i64,
    pub unused: [i64; 3],
}

/// `struct statx_timestamp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatxTimestamp {
    pub tv_sec: i64,
    pub tv_nsec: u32,
    pub reserved: i32,
}

/// Linux's `struct statx` (statx(2)): what `struct stat` says, with each
/// field's presence in `stx_mask`, the device numbers split, and room to
/// grow (256 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statx {
    pub stx_mask: u32,
    pub stx_blksize: u32,
    pub stx_attributes: u64,
    pub stx_nlink: u32,
    pub stx_uid: u32,
    pub stx_gid: u32,
    pub stx_mode: u16,
    pub spare0: u16,
    pub stx_ino: u64,
    pub stx_size: u64,
    pub stx_blocks: u64,
    pub stx_attributes_mask: u64,
    pub stx_atime: StatxTimestamp,
    pub stx_btime: StatxTimestamp,
    pub stx_ctime: StatxTimestamp,
    pub stx_mtime: StatxTimestamp,
    pub stx_rdev_major: u32,
    pub stx_rdev_minor: u32,
    pub stx_dev_major: u32,
    pub stx_dev_minor: u32,
    pub stx_mnt_id: u64,
    pub stx_dio_mem_align: u32,
    pub stx_dio_offset_align: u32,
    pub spare3: [u64; 12],
}

/// statx's mask bits: the fields `struct stat` has (type, mode, links,
/// owner, group, times, inode, size, blocks); a birth time and a mount id
/// this kernel does not give. A bit outside is asked of a later kernel
/// and ignored; `STATX_RESERVED` is refused (EINVAL).
pub const STATX_BASIC_STATS: u32 = 0x7ff;
pub const STATX_BTIME: u32 = 0x800;
pub const STATX_MNT_ID: u32 = 0x1000;
pub const STATX_RESERVED: u32 = 0x8000_0000;
/// statx's flags besides `AT_EMPTY_PATH` and `AT_SYMLINK_NOFOLLOW`: no
/// automount (nothing here mounts itself), and how far to go to get fresh
/// numbers from a network file system (both at once is EINVAL).
pub const AT_NO_AUTOMOUNT: u32 = 0x800;
pub const AT_STATX_FORCE_SYNC: u32 = 0x2000;
pub const AT_STATX_DONT_SYNC: u32 = 0x4000;
pub const AT_STATX_SYNC_TYPE: u32 = 0x6000;

impl Statx {
    /// What `stat` says, as statx says it: every basic field.
    pub fn from_stat(st: &Stat) -> Statx {
        let time = |sec: i64, nsec: i64| StatxTimestamp {
            tv_sec: sec,
            tv_nsec: nsec as u32,
            reserved: 0,
        };
        Statx {
            stx_mask: STATX_BASIC_STATS,
            stx_blksize: st.st_blksize as u32,
            stx_nlink: st.st_nlink as u32,
            stx_uid: st.st_uid,
            stx_gid: st.st_gid,
            stx_mode: st.st_mode as u16,
            stx_ino: st.st_ino,
            stx_size: st.st_size as u64,
            stx_blocks: st.st_blocks as u64,
            stx_atime: time(st.st_atime, st.st_atime_nsec),
            stx_ctime: time(st.st_ctime, st.st_ctime_nsec),
            stx_mtime: time(st.st_mtime, st.st_mtime_nsec),
            stx_rdev_major: dev_major(st.st_rdev),
            stx_rdev_minor: dev_minor(st.st_rdev),
            stx_dev_major: dev_major(st.st_dev),
            stx_dev_minor: dev_minor(st.st_dev),
            ..Statx::default()
        }
    }
}

// posix_fadvise(2)'s advice (fadvise64).
pub const POSIX_FADV_NORMAL: u32 = 0;
pub const POSIX_FADV_RANDOM: u32 = 1;
pub const POSIX_FADV_SEQUENTIAL: u32 = 2;
pub const POSIX_FADV_WILLNEED: u32 = 3;
pub const POSIX_FADV_DONTNEED: u32 = 4;
pub const POSIX_FADV_NOREUSE: u32 = 5;

/// The largest write to a pipe that POSIX makes atomic: it lands whole,
/// never interleaved with another writer's bytes (`<limits.h>`).
pub const PIPE_BUF: usize = 4096;

pub const S_IFMT: u32 = 0o170000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFCHR: u32 = 0o020000;
pub const S_IFIFO: u32 = 0o010000;
pub const S_IFBLK: u32 = 0o060000;
pub const S_IFLNK: u32 = 0o120000;
pub const S_IFSOCK: u32 = 0o140000;
/// Set-user-ID, set-group-ID and sticky bits of a mode.
pub const S_ISUID: u32 = 0o4000;
pub const S_ISGID: u32 = 0o2000;
pub const S_ISVTX: u32 = 0o1000;
pub const S_IXGRP: u32 = 0o010;

/// A device number as user space sees it in `st_rdev` and passes to
/// mknod: glibc's and musl's `makedev` encoding, 12 bits of major and 20
/// of minor spread so that small numbers read as `major << 8 | minor`.
pub const fn makedev(major: u32, minor: u32) -> u64 {
    let (major, minor) = (major as u64, minor as u64);
    ((major & 0xfff) << 8) | ((major & !0xfff) << 32) | (minor & 0xff) | ((minor & !0xff) << 12)
}

/// The major half of a [`makedev`] number.
pub const fn dev_major(dev: u64) -> u32 {
    (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32
}

/// The minor half of a [`makedev`] number.
pub const fn dev_minor(dev: u64) -> u32 {
    ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32
}

/// Header of one `getdents64` record (`struct linux_dirent64`); the
/// NUL-terminated name follows, and records are 8-byte aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Dirent64Header {
    pub d_ino: u64,
    pub d_off: i64,
    pub d_reclen: u16,
    pub d_type: u8,
}
pub const DIRENT64_NAME_OFFSET: usize = 19;
pub const DT_CHR: u8 = 2;
pub const DT_DIR: u8 = 4;
pub const DT_REG: u8 = 8;
pub const DT_FIFO: u8 = 1;
pub const DT_LNK: u8 = 10;
pub const DT_UNKNOWN: u8 = 0;
pub const DT_BLK: u8 = 6;
pub const DT_SOCK: u8 = 12;

/// `struct timespec`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

/// `struct utsname`: six 65-byte fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Utsname {
    pub sysname: [u8; 65],
    pub nodename: [u8; 65],
    pub release: [u8; 65],
    pub version: [u8; 65],
    pub machine: [u8; 65],
    pub domainname: [u8; 65],
}

// Terminal ioctls (Linux's `asm-generic/ioctls.h`).
pub const TCGETS: u32 = 0x5401;
pub const TCSETS: u32 = 0x5402;
pub const TCSETSW: u32 = 0x5403;
pub const TCSETSF: u32 = 0x5404;
pub const TIOCGPGRP: u32 = 0x540f;
/// Bytes waiting to be read (an int), on a pipe or a socket.
pub const FIONREAD: u32 = 0x541b;
/// The requests every descriptor takes, whatever it is open on (Linux's
/// `do_vfs_ioctl`): O_NONBLOCK on or off by an int (what Python's
/// `os.set_blocking` uses), close-on-exec on and off, O_ASYNC by an int.
pub const FIONBIO: u32 = 0x5421;
pub const FIONCLEX: u32 = 0x5450;
pub const FIOCLEX: u32 = 0x5451;
pub const FIOASYNC: u32 = 0x5452;
/// Block devices: the size in bytes (u64), the logical sector size (i32),
/// and flushing its buffers (`<linux/fs.h>`).
pub const BLKGETSIZE64: u32 = 0x8008_1272;
pub const BLKSSZGET: u32 = 0x1268;
pub const BLKFLSBUF: u32 = 0x1261;
pub const TIOCSPGRP: u32 = 0x5410;
pub const TIOCGWINSZ: u32 = 0x5413;
pub const TIOCSWINSZ: u32 = 0x5414;
pub const TCSBRK: u32 = 0x5409;
pub const TCXONC: u32 = 0x540a;
pub const TCFLSH: u32 = 0x540b;
pub const TIOCSCTTY: u32 = 0x540e;
pub const TIOCOUTQ: u32 = 0x5411;
pub const TIOCNOTTY: u32 = 0x5422;
pub const TCSBRKP: u32 = 0x5425;
pub const TIOCGSID: u32 = 0x5429;
/// A pseudo-terminal master's number (`unsigned int`), its slave's lock
/// (an int, set and got), and an open of its slave (`<asm-generic/ioctls.h>`).
pub const TIOCGPTN: u32 = 0x8004_5430;
pub const TIOCSPTLCK: u32 = 0x4004_5431;
pub const TIOCGPTLCK: u32 = 0x8004_5439;
pub const TIOCGPTPEER: u32 = 0x5441;
/// TCFLSH's queues: typed input, written output, both.
pub const TCIFLUSH: u32 = 0;
pub const TCOFLUSH: u32 = 1;
pub const TCIOFLUSH: u32 = 2;

/// The kernel's `struct termios` (`asm-generic/termbits.h`), 36 bytes: what
/// TCGETS writes and TCSETS reads. C libraries declare their own, which may
/// be larger (musl's is 60 bytes: it adds the speeds); glibc's buffer is
/// exactly this size, so writing more smashes its stack.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Termios {
    pub c_iflag: u32,
    pub c_oflag: u32,
    pub c_cflag: u32,
    pub c_lflag: u32,
    pub c_line: u8,
    pub c_cc: [u8; NCCS],
}
pub const NCCS: usize = 19;

// termios flag bits (octal, as in the headers).
pub const ICRNL: u32 = 0o400;
pub const OPOST: u32 = 0o1;
pub const ONLCR: u32 = 0o4;
pub const B38400: u32 = 0o17;
pub const CS8: u32 = 0o60;
pub const CREAD: u32 = 0o200;
pub const INLCR: u32 = 0o100;
pub const IGNCR: u32 = 0o200;
pub const IXON: u32 = 0o2000;
pub const ISIG: u32 = 0o1;
pub const ICANON: u32 = 0o2;
pub const ECHO: u32 = 0o10;
pub const ECHOE: u32 = 0o20;
pub const ECHOK: u32 = 0o40;
pub const ECHONL: u32 = 0o100;
pub const NOFLSH: u32 = 0o200;
pub const ECHOCTL: u32 = 0o1000;
pub const ECHOKE: u32 = 0o4000;
pub const IEXTEN: u32 = 0o100000;

// Indices into `c_cc`.
pub const VINTR: usize = 0;
pub const VQUIT: usize = 1;
pub const VERASE: usize = 2;
pub const VKILL: usize = 3;
pub const VEOF: usize = 4;
pub const VTIME: usize = 5;
pub const VMIN: usize = 6;
pub const VSTART: usize = 8;
pub const VSTOP: usize = 9;
pub const VSUSP: usize = 10;
pub const VREPRINT: usize = 12;
pub const VDISCARD: usize = 13;
pub const VWERASE: usize = 14;
pub const VLNEXT: usize = 15;

impl Termios {
    /// A new terminal's settings: Linux's control characters (`INIT_C_CC`:
    /// ^C, ^\, DEL, ^U, ^D, ...) and canonical mode with echo and signals.
    pub const fn initial() -> Termios {
        let mut c_cc = [0u8; NCCS];
        c_cc[VINTR] = 0x03;
        c_cc[VQUIT] = 0x1c;
        c_cc[VERASE] = 0x7f;
        c_cc[VKILL] = 0x15;
        c_cc[VEOF] = 0x04;
        c_cc[VMIN] = 1;
        c_cc[VSTART] = 0x11;
        c_cc[VSTOP] = 0x13;
        c_cc[VSUSP] = 0x1a;
        c_cc[VREPRINT] = 0x12;
        c_cc[VDISCARD] = 0x0f;
        c_cc[VWERASE] = 0x17;
        c_cc[VLNEXT] = 0x16;
        Termios {
            c_iflag: ICRNL,
            c_oflag: OPOST | ONLCR,
            c_cflag: B38400 | CS8 | CREAD,
            c_lflag: ISIG | ICANON | ECHO,
            c_line: 0,
            c_cc,
        }
    }

    /// What Linux gives a new pseudo-terminal's slave (`tty_std_termios`
    /// as the pty driver sets it up): the console's, with XON/XOFF and the
    /// echo of erasures and control characters that terminal emulators
    /// expect.
    pub const fn standard() -> Termios {
        let mut t = Termios::initial();
        t.c_iflag |= IXON;
        t.c_lflag |= ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN;
        t
    }
}

/// `struct winsize` (TIOCGWINSZ).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Winsize {
    pub ws_row: u16,
    pub ws_col: u16,
    pub ws_xpixel: u16,
    pub ws_ypixel: u16,
}

// open(2) flags.
pub const O_RDONLY: u32 = 0;
pub const O_WRONLY: u32 = 1;
pub const O_RDWR: u32 = 2;
pub const O_ACCMODE: u32 = 3;
pub const O_CREAT: u32 = 0o100;
pub const O_EXCL: u32 = 0o200;
pub const O_NOCTTY: u32 = 0o400;
pub const O_TRUNC: u32 = 0o1000;
pub const O_APPEND: u32 = 0o2000;
pub const O_NONBLOCK: u32 = 0o4000;
pub const O_DIRECTORY: u32 = 0o200000;
/// Unbuffered I/O on a file; on a pipe (pipe2), packet mode.
pub const O_DIRECT: u32 = 0o40000;
/// fallocate(2)'s modes.
pub const FALLOC_FL_KEEP_SIZE: u32 = 0x01;
pub const FALLOC_FL_PUNCH_HOLE: u32 = 0x02;
pub const FALLOC_FL_NO_HIDE_STALE: u32 = 0x04;
pub const FALLOC_FL_COLLAPSE_RANGE: u32 = 0x08;
pub const FALLOC_FL_ZERO_RANGE: u32 = 0x10;
pub const FALLOC_FL_INSERT_RANGE: u32 = 0x20;
pub const FALLOC_FL_UNSHARE_RANGE: u32 = 0x40;
/// close_range(2)'s flags.
pub const CLOSE_RANGE_UNSHARE: u32 = 1 << 1;
pub const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
/// preadv2(2) and pwritev2(2)'s flags (those taken here).
pub const RWF_HIPRI: u32 = 1;
pub const RWF_DSYNC: u32 = 2;
pub const RWF_SYNC: u32 = 4;
/// Signal-driven I/O (F_SETFL; Linux's FASYNC).
pub const O_ASYNC: u32 = 0o20000;
pub const O_CLOEXEC: u32 = 0o2000000;
/// A descriptor that names a file without opening it for I/O: good for
/// fstat, fchdir, the *at calls and fcntl's descriptor flags, EBADF for
/// the rest (Linux's FMODE_PATH).
pub const O_PATH: u32 = 0o10000000;
/// Reads leave the access time alone: only for the file's owner (EPERM).
pub const O_NOATIME: u32 = 0o1000000;
// getrandom(2) flags, and the most one call returns (Linux's bound before
// 5.18, kept so a huge request stays short).
pub const GRND_NONBLOCK: u32 = 1;
pub const GRND_RANDOM: u32 = 2;
pub const GRND_INSECURE: u32 = 4;
pub const GETRANDOM_MAX: u64 = (1 << 25) - 1;
/// `openat`'s "relative to the current directory".
pub const AT_FDCWD: i32 = -100;
pub const AT_REMOVEDIR: u32 = 0x200;
/// newfstatat/faccessat: operate on `dirfd` itself when the path is empty.
pub const AT_EMPTY_PATH: u32 = 0x1000;
/// stat and friends: a symbolic link as the last name is the link itself.
pub const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
/// faccessat: check with the effective ids (here the same as the real ones).
pub const AT_EACCESS: u32 = 0x200;
// access(2)'s modes: whether the file exists, or may be run, written, read.
pub const F_OK: u32 = 0;
pub const X_OK: u32 = 1;
pub const W_OK: u32 = 2;
pub const R_OK: u32 = 4;
/// linkat: follow a symbolic link given as the old name.
pub const AT_SYMLINK_FOLLOW: u32 = 0x400;
/// open: fail with ELOOP if the last name is a symbolic link.
pub const O_NOFOLLOW: u32 = 0o400000;

/// utimensat's `tv_nsec` for "now" and for "leave this time alone".
pub const UTIME_NOW: i64 = (1 << 30) - 1;
pub const UTIME_OMIT: i64 = (1 << 30) - 2;

/// `struct utimbuf` (utime(2)): access and modification times, seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Utimbuf {
    pub actime: i64,
    pub modtime: i64,
}

/// `struct statfs` (statfs(2), fstatfs(2)) as Linux x86_64 lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statfs {
    pub f_type: i64,
    pub f_bsize: i64,
    pub f_blocks: u64,
    pub f_bfree: u64,
    pub f_bavail: u64,
    pub f_files: u64,
    pub f_ffree: u64,
    pub f_fsid: [i32; 2],
    pub f_namelen: i64,
    pub f_frsize: i64,
    pub f_flags: i64,
    pub f_spare: [i64; 4],
}
/// `f_type` of the ramfs and of /proc (Linux's `RAMFS_MAGIC`,
/// `PROC_SUPER_MAGIC`).
pub const RAMFS_MAGIC: i64 = 0x8584_58f6;
pub const PROC_SUPER_MAGIC: i64 = 0x9fa0;
/// `f_type` of ext2, ext3 and ext4 (`EXT2_SUPER_MAGIC`) and of a tmpfs
/// (`TMPFS_MAGIC`).
pub const EXT2_SUPER_MAGIC: i64 = 0xef53;
pub const TMPFS_MAGIC: i64 = 0x0102_1994;
/// `f_type` of a pipe (Linux's `PIPEFS_MAGIC`).
pub const PIPEFS_MAGIC: i64 = 0x5049_5045;
/// `f_flags`: the mount's flags (`ST_VALID` says they are filled in).
pub const ST_RDONLY: i64 = 0x1;
pub const ST_NOSUID: i64 = 0x2;
pub const ST_NODEV: i64 = 0x4;
pub const ST_NOEXEC: i64 = 0x8;
pub const ST_VALID: i64 = 0x20;
pub const ST_RELATIME: i64 = 0x1000;
pub const ST_NOATIME: i64 = 0x400;

// mount(2)'s flags (Linux's uapi/linux/mount.h): those this kernel obeys
// or accepts.
pub const MS_RDONLY: u64 = 1;
pub const MS_NOSUID: u64 = 2;
pub const MS_NODEV: u64 = 4;
pub const MS_NOEXEC: u64 = 8;
pub const MS_REMOUNT: u64 = 32;
pub const MS_NOATIME: u64 = 1024;
pub const MS_BIND: u64 = 4096;
pub const MS_MOVE: u64 = 8192;
pub const MS_SILENT: u64 = 32768;
pub const MS_RELATIME: u64 = 1 << 21;
/// The old "magic" in the top half of the flags, which Linux ignores.
pub const MS_MGC_MSK: u64 = 0xffff_0000;
pub const MS_MGC_VAL: u64 = 0xc0ed_0000;
// umount2(2)'s flags.
pub const MNT_FORCE: u32 = 1;
pub const MNT_DETACH: u32 = 2;
pub const MNT_EXPIRE: u32 = 4;
pub const UMOUNT_NOFOLLOW: u32 = 8;
/// The longest name in a directory.
pub const NAME_MAX: usize = 255;

// Capabilities (capabilities(7), Linux's uapi/linux/capability.h): the
// bits this kernel consults, and the number of the last one Linux 6.1 has.
pub const CAP_CHOWN: u32 = 0;
pub const CAP_DAC_OVERRIDE: u32 = 1;
pub const CAP_DAC_READ_SEARCH: u32 = 2;
pub const CAP_FOWNER: u32 = 3;
pub const CAP_FSETID: u32 = 4;
pub const CAP_KILL: u32 = 5;
pub const CAP_SETPCAP: u32 = 8;
pub const CAP_LINUX_IMMUTABLE: u32 = 9;
pub const CAP_NET_BIND_SERVICE: u32 = 10;
pub const CAP_NET_RAW: u32 = 13;
pub const CAP_IPC_LOCK: u32 = 14;
pub const CAP_SYS_ADMIN: u32 = 21;
pub const CAP_SYS_NICE: u32 = 23;
pub const CAP_SYS_RESOURCE: u32 = 24;
/// Setting the wall clock (clock_settime, settimeofday).
pub const CAP_SYS_TIME: u32 = 25;
pub const CAP_MKNOD: u32 = 27;
pub const CAP_LEASE: u32 = 28;
pub const CAP_MAC_OVERRIDE: u32 = 32;
pub const CAP_LAST_CAP: u32 = 40;
/// capget/capset's header versions: 32-bit sets (one data struct), and
/// the two 64-bit ones (two data structs, low word first).
pub const LINUX_CAPABILITY_VERSION_1: u32 = 0x1998_0330;
pub const LINUX_CAPABILITY_VERSION_2: u32 = 0x2007_1026;
pub const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// `struct __user_cap_header_struct`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CapHeader {
    pub version: u32,
    pub pid: i32,
}

/// `struct __user_cap_data_struct`: 32 bits of each set.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CapData {
    pub effective: u32,
    pub permitted: u32,
    pub inheritable: u32,
}

// getpriority(2) and setpriority(2): what `who` names.
pub const PRIO_PROCESS: u32 = 0;
pub const PRIO_PGRP: u32 = 1;
pub const PRIO_USER: u32 = 2;

// sched_setscheduler(2) and its family: the policies, and the flag that
// may be or'ed into one to put a child back to normal at fork.
pub const SCHED_OTHER: u32 = 0;
pub const SCHED_FIFO: u32 = 1;
pub const SCHED_RR: u32 = 2;
pub const SCHED_BATCH: u32 = 3;
pub const SCHED_IDLE: u32 = 5;
pub const SCHED_DEADLINE: u32 = 6;
pub const SCHED_RESET_ON_FORK: u32 = 0x4000_0000;

/// `struct sched_param`: a real-time priority, 1 to 99; 0 for the normal
/// policies.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedParam {
    pub sched_priority: i32,
}

/// renameat2(2): fail with EEXIST rather than replace.
pub const RENAME_NOREPLACE: u32 = 1;

// fcntl(2).
pub const F_DUPFD: u32 = 0;
pub const F_GETFD: u32 = 1;
pub const F_SETFD: u32 = 2;
pub const F_GETFL: u32 = 3;
pub const F_SETFL: u32 = 4;
pub const F_DUPFD_CLOEXEC: u32 = 1030;
/// Signal-driven I/O (fcntl(2)): who gets the signal when an O_ASYNC file
/// becomes ready (a pid, or minus a process group), and which signal (0:
/// SIGIO without details; another: that signal with si_code POLL_*,
/// si_band and si_fd).
pub const F_SETOWN: u32 = 8;
pub const F_GETOWN: u32 = 9;
pub const F_SETSIG: u32 = 10;
pub const F_GETSIG: u32 = 11;
/// F_SETOWN with a `struct f_owner_ex`, which can also name one thread.
pub const F_SETOWN_EX: u32 = 15;
pub const F_GETOWN_EX: u32 = 16;
pub const F_OWNER_TID: i32 = 0;
pub const F_OWNER_PID: i32 = 1;
pub const F_OWNER_PGRP: i32 = 2;

/// `struct f_owner_ex`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FOwnerEx {
    pub kind: i32,
    pub pid: i32,
}
const _: () = assert!(size_of::<FOwnerEx>() == 8);

/// si_code of a signal-driven I/O signal (F_SETSIG): what became possible.
pub const POLL_IN: i32 = 1;
pub const POLL_OUT: i32 = 2;
/// A lease is being broken (fs/lease.rs).
pub const POLL_MSG: i32 = 3;
pub const POLL_ERR: i32 = 4;
pub const POLL_HUP: i32 = 6;
/// Leases (fcntl(2)): set one (F_RDLCK, F_WRLCK) or give it up (F_UNLCK),
/// and ask which the descriptor holds.
pub const F_SETLEASE: u32 = 1024;
pub const F_GETLEASE: u32 = 1025;
/// A pipe's capacity: set (rounded up to a power of two pages), get.
pub const F_SETPIPE_SZ: u32 = 1031;
pub const F_GETPIPE_SZ: u32 = 1032;
/// Record locks: POSIX (owned by the process) ...
pub const F_GETLK: u32 = 5;
pub const F_SETLK: u32 = 6;
pub const F_SETLKW: u32 = 7;
/// ... and open file description locks (owned by the open file).
pub const F_OFD_GETLK: u32 = 36;
pub const F_OFD_SETLK: u32 = 37;
pub const F_OFD_SETLKW: u32 = 38;
/// A file's seals (what may no longer be done to it): add some, read
/// them. Only F_SEAL_SEAL is ever set here (no more seals may be added).
pub const F_ADD_SEALS: u32 = 1033;
pub const F_GET_SEALS: u32 = 1034;
pub const F_SEAL_SEAL: u32 = 0x1;
/// Every seal Linux 6.1 knows (seal, shrink, grow, write, future write).
pub const F_ALL_SEALS: u32 = 0x1f;
/// memfd_create's flags: close-on-exec, and seals allowed (refused here:
/// EINVAL); the longest name (NAME_MAX less "memfd:").
pub const MFD_CLOEXEC: u32 = 1;
pub const MFD_ALLOW_SEALING: u32 = 2;
pub const MFD_NAME_MAX: usize = 249;

// flock(2)'s operations: a shared or an exclusive lock, or none, with
// LOCK_NB or'ed in not to wait. LOCK_MAND, long broken, Linux accepts and
// ignores.
pub const LOCK_SH: u32 = 1;
pub const LOCK_EX: u32 = 2;
pub const LOCK_NB: u32 = 4;
pub const LOCK_UN: u32 = 8;
pub const LOCK_MAND: u32 = 32;
// setxattr(2)'s flags: fail if the attribute exists, or if it does not.
pub const XATTR_CREATE: u32 = 1;
pub const XATTR_REPLACE: u32 = 2;
/// The longest attribute name (`user.foo` and the like), its prefix
/// included; a longer or empty name is ERANGE.
pub const XATTR_NAME_MAX: usize = 255;
/// The largest value setxattr takes (E2BIG past it), and the most getxattr
/// and listxattr look at.
pub const XATTR_SIZE_MAX: usize = 65536;
/// `l_type` of `struct flock`.
pub const F_RDLCK: i16 = 0;
pub const F_WRLCK: i16 = 1;
pub const F_UNLCK: i16 = 2;

/// `struct flock` (fcntl's record locks).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flock {
    pub l_type: i16,
    pub l_whence: i16,
    pub pad0: u32,
    pub l_start: i64,
    pub l_len: i64,
    pub l_pid: i32,
    pub pad1: u32,
}
pub const FD_CLOEXEC: u64 = 1;

// Clocks (clock_gettime, clock_getres, clock_nanosleep).
pub const CLOCK_REALTIME: u32 = 0;
pub const CLOCK_MONOTONIC: u32 = 1;
pub const CLOCK_PROCESS_CPUTIME_ID: u32 = 2;
pub const CLOCK_THREAD_CPUTIME_ID: u32 = 3;
pub const CLOCK_MONOTONIC_RAW: u32 = 4;
pub const CLOCK_REALTIME_COARSE: u32 = 5;
pub const CLOCK_MONOTONIC_COARSE: u32 = 6;
pub const CLOCK_BOOTTIME: u32 = 7;
pub const CLOCK_TAI: u32 = 11;
/// clock_nanosleep: the time is absolute.
pub const TIMER_ABSTIME: u32 = 1;

pub const SEEK_SET: u32 = 0;
pub const SEEK_CUR: u32 = 1;
pub const SEEK_END: u32 = 2;
/// The next data, or the next hole, at or after the offset.
pub const SEEK_DATA: u32 = 3;
pub const SEEK_HOLE: u32 = 4;

/// splice(2)'s flags: hints (move pages, more to come, pages given), and
/// not to wait on the pipe.
pub const SPLICE_F_MOVE: u32 = 1;
pub const SPLICE_F_NONBLOCK: u32 = 2;
pub const SPLICE_F_MORE: u32 = 4;
pub const SPLICE_F_GIFT: u32 = 8;
pub const SPLICE_F_ALL: u32 = SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT;

// mmap(2).
pub const PROT_NONE: u32 = 0;
pub const PROT_READ: u32 = 1;
pub const PROT_WRITE: u32 = 2;
pub const PROT_EXEC: u32 = 4;
pub const MAP_SHARED: u32 = 0x01;
pub const MAP_PRIVATE: u32 = 0x02;
/// MAP_SHARED that refuses flags it does not know (EOPNOTSUPP) instead of
/// ignoring them; files only.
pub const MAP_SHARED_VALIDATE: u32 = 0x03;
/// The bits of the flags that say the mapping's type (one of the three).
pub const MAP_TYPE: u32 = 0x0f;
pub const MAP_FIXED: u32 = 0x10;
pub const MAP_ANONYMOUS: u32 = 0x20;
pub const MAP_GROWSDOWN: u32 = 0x0100;
pub const MAP_DENYWRITE: u32 = 0x0800;
pub const MAP_EXECUTABLE: u32 = 0x1000;
pub const MAP_LOCKED: u32 = 0x2000;
pub const MAP_NORESERVE: u32 = 0x4000;
pub const MAP_POPULATE: u32 = 0x8000;
pub const MAP_NONBLOCK: u32 = 0x1_0000;
pub const MAP_STACK: u32 = 0x2_0000;
pub const MAP_HUGETLB: u32 = 0x4_0000;
/// Stores reach the file's medium before a page fault returns (DAX only).
pub const MAP_SYNC: u32 = 0x8_0000;
/// MAP_FIXED that fails with EEXIST instead of replacing a mapping.
pub const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;
pub const MAP_UNINITIALIZED: u32 = 0x400_0000;
/// The flags every kernel since Linux 4.15 knows (its `LEGACY_MAP_MASK`):
/// MAP_SHARED_VALIDATE refuses any other.
pub const MAP_LEGACY_FLAGS: u32 = MAP_SHARED
    | MAP_PRIVATE
    | MAP_FIXED
    | MAP_ANONYMOUS
    | MAP_DENYWRITE
    | MAP_EXECUTABLE
    | MAP_UNINITIALIZED
    | MAP_GROWSDOWN
    | MAP_LOCKED
    | MAP_NORESERVE
    | MAP_POPULATE
    | MAP_NONBLOCK
    | MAP_STACK
    | MAP_HUGETLB;
/// mremap(2): the mapping may move to grow.
pub const MREMAP_MAYMOVE: u32 = 1;
/// mremap(2): move to exactly the fifth argument's address (needs MAYMOVE),
/// replacing what was mapped there.
pub const MREMAP_FIXED: u32 = 2;
/// madvise(2) advice (Linux's include/uapi/asm-generic/mman-common.h).
pub const MADV_NORMAL: u32 = 0;
pub const MADV_WILLNEED: u32 = 3;
pub const MADV_DONTNEED: u32 = 4;
pub const MADV_FREE: u32 = 8;
pub const MADV_REMOVE: u32 = 9;
pub const MADV_WIPEONFORK: u32 = 18;
pub const MADV_KEEPONFORK: u32 = 19;
pub const MADV_POPULATE_READ: u32 = 22;
pub const MADV_POPULATE_WRITE: u32 = 23;
pub const MADV_COLLAPSE: u32 = 25;
pub const MADV_HWPOISON: u32 = 100;
pub const MADV_SOFT_OFFLINE: u32 = 101;
/// mlockall(2) flags and mlock2(2)'s one flag.
pub const MCL_CURRENT: u32 = 1;
pub const MCL_FUTURE: u32 = 2;
pub const MCL_ONFAULT: u32 = 4;
pub const MLOCK_ONFAULT: u32 = 1;
/// msync(2) flags: start writing back, drop cached copies, write back now.
pub const MS_ASYNC: u32 = 1;
pub const MS_INVALIDATE: u32 = 2;
pub const MS_SYNC: u32 = 4;

// syslog(2)'s actions (Linux's SYSLOG_ACTION_*).
pub const SYSLOG_ACTION_CLOSE: i32 = 0;
pub const SYSLOG_ACTION_OPEN: i32 = 1;
pub const SYSLOG_ACTION_READ: i32 = 2;
pub const SYSLOG_ACTION_READ_ALL: i32 = 3;
pub const SYSLOG_ACTION_READ_CLEAR: i32 = 4;
pub const SYSLOG_ACTION_CLEAR: i32 = 5;
pub const SYSLOG_ACTION_CONSOLE_OFF: i32 = 6;
pub const SYSLOG_ACTION_CONSOLE_ON: i32 = 7;
pub const SYSLOG_ACTION_CONSOLE_LEVEL: i32 = 8;
pub const SYSLOG_ACTION_SIZE_UNREAD: i32 = 9;
pub const SYSLOG_ACTION_SIZE_BUFFER: i32 = 10;

// arch_prctl(2).
pub const ARCH_SET_GS: u32 = 0x1001;
pub const ARCH_SET_FS: u32 = 0x1002;
pub const ARCH_GET_FS: u32 = 0x1003;
pub const ARCH_GET_GS: u32 = 0x1004;

// wait4(2) and waitid(2).
pub const WNOHANG: u32 = 1;
/// wait4's name for waitid's WSTOPPED: report a child stopped by a signal.
pub const WUNTRACED: u32 = 2;
pub const WSTOPPED: u32 = 2;
/// waitid only: report a child that exited (wait4 always does).
pub const WEXITED: u32 = 4;
pub const WCONTINUED: u32 = 8;
/// waitid only: report the child but leave it waitable.
pub const WNOWAIT: u32 = 0x0100_0000;
/// Linux's `__WNOTHREAD`: only the caller's own children, not its
/// threads' (every thread here shares them).
pub const WNOTHREAD: u32 = 0x2000_0000;
/// Linux's `__WALL`: wait for every kind of child.
pub const WALL: u32 = 0x4000_0000;
/// Linux's `__WCLONE`: only children whose exit signal is not SIGCHLD.
pub const WCLONE: u32 = 0x8000_0000;
/// waitid's id types: any child, one pid, one process group, a pidfd.
pub const P_ALL: u32 = 0;
pub const P_PID: u32 = 1;
pub const P_PGID: u32 = 2;
pub const P_PIDFD: u32 = 3;
/// pidfd_open's one flag: the pidfd is O_NONBLOCK (waitid on it does not
/// wait).
pub const PIDFD_NONBLOCK: u32 = O_NONBLOCK;

// Signal numbers and structures: see `signal.rs` (re-exported here).
pub use crate::signal::*;

/// Wait status of a process that exited with `code`.
pub const fn wait_status_exited(code: u8) -> i32 {
    (code as i32) << 8
}

/// Wait status of a process killed by `signal`.
/// The bit of a wait status that says a core file was written
/// (`WCOREDUMP`).
pub const WCOREFLAG: i32 = 0x80;

pub const fn wait_status_signaled(signal: u32) -> i32 {
    (signal & 0x7f) as i32
}

/// The exit code in a wait status, if the process exited (WIFEXITED,
/// WEXITSTATUS).
pub const fn wait_exit_code(status: i32) -> Option<i32> {
    if status & 0x7f == 0 {
        Some((status >> 8) & 0xff)
    } else {
        None
    }
}

/// Wait status of a process stopped by `signal` (WIFSTOPPED, WSTOPSIG).
pub const fn wait_status_stopped(signal: u32) -> i32 {
    ((signal as i32) << 8) | 0x7f
}

/// Wait status of a process continued by SIGCONT (WIFCONTINUED).
pub const WAIT_STATUS_CONTINUED: i32 = 0xffff;

/// The signal in a wait status, if a signal ended the process (WIFSIGNALED,
/// WTERMSIG); 0x7f there means stopped, not ended.
pub const fn wait_term_signal(status: i32) -> Option<u32> {
    let signal = (status & 0x7f) as u32;
    if signal != 0 && signal != 0x7f {
        Some(signal)
    } else {
        None
    }
}

// membarrier(2) commands.
pub const MEMBARRIER_CMD_QUERY: u32 = 0;
pub const MEMBARRIER_CMD_PRIVATE_EXPEDITED: u32 = 8;
pub const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: u32 = 16;

// Aux vector keys.
pub const AT_NULL: u64 = 0;
pub const AT_PHDR: u64 = 3;
pub const AT_PHENT: u64 = 4;
pub const AT_PHNUM: u64 = 5;
pub const AT_PAGESZ: u64 = 6;
pub const AT_BASE: u64 = 7;
pub const AT_FLAGS: u64 = 8;
pub const AT_ENTRY: u64 = 9;
pub const AT_UID: u64 = 11;
pub const AT_EUID: u64 = 12;
pub const AT_GID: u64 = 13;
pub const AT_EGID: u64 = 14;
pub const AT_PLATFORM: u64 = 15;
pub const AT_HWCAP: u64 = 16;
pub const AT_CLKTCK: u64 = 17;
pub const AT_SECURE: u64 = 23;
pub const AT_RANDOM: u64 = 25;
pub const AT_HWCAP2: u64 = 26;
pub const AT_EXECFN: u64 = 31;
pub const AT_SYSINFO_EHDR: u64 = 33;
pub const AT_MINSIGSTKSZ: u64 = 51;

/// One region of the AIX multi-region form of profil: `profil((char *)array,
/// (size_t)-1, 0, 0)` with an array ended by an entry whose `p_high` is 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prof {
    pub p_low: u64,
    pub p_high: u64,
    pub p_buff: u64,
    pub p_bufsize: i32,
    /// `u32::MAX`: let the kernel compute the scale that maps the range onto the buffer.
    pub p_scale: u32,
}

/// `profil`'s size argument that selects the multi-region form.
pub const PROFIL_MULTI: usize = usize::MAX;
/// `p_scale` meaning "compute it".
pub const PROF_SCALE_AUTO: u32 = u32::MAX;

/// Why profiling last stopped for a process (`ProfStat::stopped_by`).
pub const PROF_NEVER_STARTED: u32 = 0;
pub const PROF_RUNNING: u32 = 1;
pub const PROF_STOPPED_BY_CALL: u32 = 2;
pub const PROF_STOPPED_BY_EXEC: u32 = 3;
pub const PROF_STOPPED_BY_FAULT: u32 = 4;
pub const PROF_STOPPED_BY_BAD_CALL: u32 = 5;
pub const PROF_STOPPED_BY_EXIT: u32 = 6;

/// What `profstat(pid, &stat)` reports about one process's profiling.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfStat {
    /// Nonzero while profiling is on.
    pub on: u32,
    /// One of the `PROF_*` reasons above.
    pub stopped_by: u32,
    /// Ticks that fell into a bin since profiling was last turned on.
    pub samples: u64,
    /// Ticks dropped: pc below the offset, or past the last bin (or region).
    pub dropped: u64,
    /// Bin updates written to user memory.
    pub applied: u64,
    /// Regions in use (1 for the classic form).
    pub regions: u32,
    pub pad: u32,
}

/// `kbench`: an uncontended `IrqLock` taken and let go, per pair.
pub const KBENCH_LOCK: u32 = 0;
/// `kbench`: a TLB shootdown of every CPU's whole TLB (the IPI, each other
/// CPU's flush and answer, the wait for the last); `ENXIO` on one CPU.
pub const KBENCH_SHOOTDOWN: u32 = 1;
/// `kbench`: a call of an empty kernel function that is never inlined: in
/// the profiled kernel (`--kprof`) the call includes its mcount, which
/// records the arc while kgmon runs and returns at once when it does not;
/// in the plain kernel it is the call alone. The difference is mcount's
/// cost per call.
pub const KBENCH_CALL: u32 = 2;
/// `kbench`: the clock interrupt's part of the kernel's own profile for
/// one tick that interrupted the kernel (`kprof::on_tick`): a sample
/// counted while kgmon runs, one look at a flag when it does not. While
/// it runs, the rounds add their samples to the profile.
pub const KBENCH_KPROF_TICK: u32 = 3;
/// The most rounds one `kbench` call times.
pub const KBENCH_MAX_ROUNDS: u32 = 1000;

/// `kgmon`: whether the kernel profiles itself; returns `KGMON_OFF`,
/// `KGMON_RUNNING`, or `KGMON_NEVER` (nothing was ever started).
pub const KGMON_STATE: u32 = 0;
/// `kgmon`: start (root; `EALREADY` when running). The first start makes
/// the histograms, zeroed; a later one goes on adding to them.
pub const KGMON_START: u32 = 1;
/// `kgmon`: stop (root); the histograms are kept for extraction.
pub const KGMON_STOP: u32 = 2;
/// `kgmon`: zero every CPU's histogram (root).
pub const KGMON_RESET: u32 = 3;
/// `kgmon`: the profile as a gmon.out GNU gprof reads with the kernel's
/// ELF, into `buf` of `len` bytes (root); its length. A `len` of 0 asks
/// the length only; a shorter buffer is `ERANGE`; `ENODATA` before the
/// first start.
pub const KGMON_EXTRACT: u32 = 4;
/// `kgmon`: a workload of known shape, for tests (root): `len`
/// milliseconds in two named kernel functions, three parts in
/// `kprof::spin_three_parts` to one in `kprof::spin_one_part`, taken in
/// turns (time the host stopped the virtual CPU for is not counted);
/// `buf` unused.
pub const KGMON_SPIN: u32 = 5;
/// `kgmon`: samples the kernel histogram took on CPU `len` (root), so a
/// test can see every CPU's share; `EINVAL` past the CPUs online.
pub const KGMON_CPU_SAMPLES: u32 = 6;
/// `kgmon`: calls the profiled kernel's mcount could not record since the
/// last reset, for want of room in the arc tables (root); `EOPNOTSUPP` in
/// a kernel built without mcount (no call graph: `cargo xtask run
/// --kprof` builds one with it), `ENODATA` before the first start.
pub const KGMON_LOST_ARCS: u32 = 7;
/// `kgmon`: how long locks kept interrupts off while the kernel profiled
/// itself, as text into `buf` of `len` bytes (root), as `KGMON_EXTRACT`
/// (`len` 0 asks the length, a shorter buffer is `ERANGE`, `ENODATA`
/// before the first start): a line `profiled NS CPUS`, then `RANK NS` for
/// each rank of lock that turned interrupts off, largest first.
pub const KGMON_IRQS_OFF: u32 = 8;

/// `KGMON_STATE`'s answers.
pub const KGMON_NEVER: usize = 0;
pub const KGMON_OFF: usize = 1;
pub const KGMON_RUNNING: usize = 2;

/// What `kbench` measured: the median and quartiles of its rounds, in
/// picoseconds (TSC cycles converted with the kernel's calibration), and
/// the median in TSC cycles as measured.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KBench {
    pub median_ps: u64,
    pub q1_ps: u64,
    pub q3_ps: u64,
    pub median_cycles: u64,
}

/// Costs of the profiling path, in TSC cycles, over the recent ticks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfCost {
    /// Timer-interrupt side: computing the bin, then adding to it at once
    /// (a tick from user mode whose bin's page is writable) or recording
    /// the tick pending.
    pub tick_samples: u64,
    pub tick_median: u64,
    pub tick_p99: u64,
    /// Return-to-user side: the pending ticks' read-modify-write of the bin
    /// (ticks from system calls, and those whose page faulted).
    pub apply_samples: u64,
    pub apply_median: u64,
    pub apply_p99: u64,
}

/// `struct sysinfo` (Linux x86_64, 112 bytes; memory in units of `mem_unit`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysInfo {
    pub uptime: i64,
    pub loads: [u64; 3],
    pub totalram: u64,
    pub freeram: u64,
    pub sharedram: u64,
    pub bufferram: u64,
    pub totalswap: u64,
    pub freeswap: u64,
    pub procs: u16,
    pub pad: [u16; 3],
    pub totalhigh: u64,
    pub freehigh: u64,
    pub mem_unit: u32,
    pub pad2: u32,
}
const _: () = assert!(size_of::<SysInfo>() == 112);

/// `struct rlimit`; `RLIM_INFINITY` for no limit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rlimit {
    pub cur: u64,
    pub max: u64,
}
pub const RLIM_INFINITY: u64 = u64::MAX;
/// Resources of getrlimit/setrlimit/prlimit64, Linux's numbers.
pub const RLIMIT_CPU: u32 = 0;
pub const RLIMIT_FSIZE: u32 = 1;
pub const RLIMIT_DATA: u32 = 2;
pub const RLIMIT_STACK: u32 = 3;
pub const RLIMIT_CORE: u32 = 4;
pub const RLIMIT_RSS: u32 = 5;
pub const RLIMIT_NPROC: u32 = 6;
pub const RLIMIT_NOFILE: u32 = 7;
pub const RLIMIT_MEMLOCK: u32 = 8;
pub const RLIMIT_AS: u32 = 9;
pub const RLIMIT_LOCKS: u32 = 10;
pub const RLIMIT_SIGPENDING: u32 = 11;
pub const RLIMIT_MSGQUEUE: u32 = 12;
pub const RLIMIT_NICE: u32 = 13;
pub const RLIMIT_RTPRIO: u32 = 14;
pub const RLIMIT_RTTIME: u32 = 15;
/// Resources 0..RLIMIT_NLIMITS exist (Linux's 16).
pub const RLIMIT_NLIMITS: u32 = 16;

/// `struct tms` (times(2)), in clock ticks (`AT_CLKTCK` per second).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tms {
    pub utime: i64,
    pub stime: i64,
    pub cutime: i64,
    pub cstime: i64,
}

/// `struct rusage` (getrusage(2)): the two times, then 14 counters this
/// kernel leaves at 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rusage {
    pub utime: crate::signal::Timeval,
    pub stime: crate::signal::Timeval,
    pub counters: [i64; 14],
}
const _: () = assert!(size_of::<Rusage>() == 144);
/// Where `ru_nvcsw` and `ru_nivcsw` (voluntary and involuntary context
/// switches) sit in `counters`, after `ru_maxrss` .. `ru_nsignals`.
pub const RU_NVCSW: usize = 12;
pub const RU_NIVCSW: usize = 13;
pub const RUSAGE_SELF: i32 = 0;
pub const RUSAGE_CHILDREN: i32 = -1;
/// getrusage(2): the calling thread alone.
pub const RUSAGE_THREAD: i32 = 1;

// clone(2) flags (Linux's include/uapi/linux/sched.h). The low byte
// (CSIGNAL) is the signal the parent gets when the child ends.
pub const CSIGNAL: u64 = 0xff;
pub const CLONE_VM: u64 = 0x0000_0100;
pub const CLONE_FS: u64 = 0x0000_0200;
pub const CLONE_FILES: u64 = 0x0000_0400;
pub const CLONE_SIGHAND: u64 = 0x0000_0800;
pub const CLONE_PIDFD: u64 = 0x0000_1000;
pub const CLONE_PTRACE: u64 = 0x0000_2000;
pub const CLONE_VFORK: u64 = 0x0000_4000;
pub const CLONE_PARENT: u64 = 0x0000_8000;
pub const CLONE_THREAD: u64 = 0x0001_0000;
pub const CLONE_NEWNS: u64 = 0x0002_0000;
pub const CLONE_SYSVSEM: u64 = 0x0004_0000;
pub const CLONE_SETTLS: u64 = 0x0008_0000;
pub const CLONE_PARENT_SETTID: u64 = 0x0010_0000;
pub const CLONE_CHILD_CLEARTID: u64 = 0x0020_0000;
pub const CLONE_DETACHED: u64 = 0x0040_0000;
pub const CLONE_UNTRACED: u64 = 0x0080_0000;
pub const CLONE_CHILD_SETTID: u64 = 0x0100_0000;

// futex(2) operations and flags (include/uapi/linux/futex.h).
pub const FUTEX_WAIT: u32 = 0;
pub const FUTEX_WAKE: u32 = 1;
pub const FUTEX_REQUEUE: u32 = 3;
pub const FUTEX_CMP_REQUEUE: u32 = 4;
pub const FUTEX_WAKE_OP: u32 = 5;
pub const FUTEX_LOCK_PI: u32 = 6;
pub const FUTEX_UNLOCK_PI: u32 = 7;
pub const FUTEX_TRYLOCK_PI: u32 = 8;
pub const FUTEX_WAIT_BITSET: u32 = 9;
pub const FUTEX_WAKE_BITSET: u32 = 10;
/// futex_waitv(2)'s entry flag: the word is 32 bits (the one size there is).
pub const FUTEX2_SIZE_U32: u32 = 2;
/// The most words one futex_waitv(2) call may wait on.
pub const FUTEX_WAITV_MAX: usize = 128;

/// One word of futex_waitv(2): sleep while the word at `uaddr` holds `val`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FutexWaitv {
    pub val: u64,
    pub uaddr: u64,
    /// FUTEX2_SIZE_U32, with FUTEX_PRIVATE_FLAG or not.
    pub flags: u32,
    pub reserved: u32,
}
const _: () = assert!(size_of::<FutexWaitv>() == 24);

/// FUTEX_LOCK_PI with its timeout on CLOCK_MONOTONIC (unless
/// FUTEX_CLOCK_REALTIME), where FUTEX_LOCK_PI's is always CLOCK_REALTIME.
pub const FUTEX_LOCK_PI2: u32 = 13;
pub const FUTEX_PRIVATE_FLAG: u32 = 128;
pub const FUTEX_CLOCK_REALTIME: u32 = 256;
/// The operation without its flags.
pub const FUTEX_CMD_MASK: u32 = !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
/// The bitset FUTEX_WAIT and FUTEX_WAKE use: every waiter matches.
pub const FUTEX_BITSET_MATCH_ANY: u32 = u32::MAX;
// A robust mutex's futex word: the owner's tid and two flags.
pub const FUTEX_WAITERS: u32 = 0x8000_0000;
pub const FUTEX_OWNER_DIED: u32 = 0x4000_0000;
pub const FUTEX_TID_MASK: u32 = 0x3fff_ffff;

/// `struct robust_list_head` (set_robust_list(2)): the list of robust
/// mutexes a thread holds, which the kernel walks when the thread dies.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RobustListHead {
    /// First entry (`struct robust_list *`); the list ends where an entry
    /// points back to the head.
    pub next: u64,
    /// From an entry to its mutex's futex word, in bytes.
    pub futex_offset: i64,
    /// An entry being locked or unlocked right now, or 0.
    pub list_op_pending: u64,
}
const _: () = assert!(size_of::<RobustListHead>() == 24);

// prctl(2) options this kernel has.
/// The signal a process gets when its parent ends.
pub const PR_SET_PDEATHSIG: u32 = 1;
pub const PR_GET_PDEATHSIG: u32 = 2;
/// Set the calling thread's name (16 bytes with the NUL), as `ps` shows it.
pub const PR_SET_NAME: u32 = 15;
pub const PR_GET_NAME: u32 = 16;
/// Whether the thread may read the time-stamp counter, one of the two
/// `PR_TSC_*` values (x86 only).
pub const PR_GET_TSC: u32 = 25;
pub const PR_SET_TSC: u32 = 26;
/// `rdtsc` works, as it does for every thread that never asked.
pub const PR_TSC_ENABLE: u64 = 1;
/// `rdtsc` in user mode is a SIGSEGV.
pub const PR_TSC_SIGSEGV: u64 = 2;
pub const PR_SET_TIMERSLACK: u32 = 29;
pub const PR_GET_TIMERSLACK: u32 = 30;
/// A thread's timer slack until it sets one (Linux's 50 µs).
pub const DEFAULT_TIMER_SLACK_NS: u64 = 50_000;
/// Names are at most this long, NUL included (Linux's TASK_COMM_LEN).
pub const TASK_COMM_LEN: usize = 16;

/// `struct pollfd` (poll(2)).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollFd {
    pub fd: i32,
    pub events: i16,
    pub revents: i16,
}
const _: () = assert!(size_of::<PollFd>() == 8);
pub const POLLIN: i16 = 0x001;
pub const POLLPRI: i16 = 0x002;
pub const POLLOUT: i16 = 0x004;
pub const POLLERR: i16 = 0x008;
pub const POLLHUP: i16 = 0x010;
pub const POLLNVAL: i16 = 0x020;
pub const POLLRDNORM: i16 = 0x040;
pub const POLLWRNORM: i16 = 0x100;
pub const POLLWRBAND: i16 = 0x200;
/// A message (a lease being broken, in a signal's si_band).
pub const POLLMSG: i16 = 0x400;
/// The peer shut its writing side down (or went): a read will see the end.
pub const POLLRDHUP: i16 = 0x2000;

/// `struct epoll_event`: packed on x86_64 (12 bytes), as Linux has it.
#[repr(C, packed)]
#[derive(Clone, Copy, Debug, Default)]
pub struct EpollEvent {
    pub events: u32,
    pub data: u64,
}
const _: () = assert!(size_of::<EpollEvent>() == 12);
pub const EPOLL_CTL_ADD: u32 = 1;
pub const EPOLL_CTL_DEL: u32 = 2;
pub const EPOLL_CTL_MOD: u32 = 3;
/// epoll's event bits are poll's, widened, and these.
pub const EPOLLEXCLUSIVE: u32 = 1 << 28;
pub const EPOLLWAKEUP: u32 = 1 << 29;
pub const EPOLLONESHOT: u32 = 1 << 30;
pub const EPOLLET: u32 = 1 << 31;
/// epoll_create1's one flag (O_CLOEXEC).
pub const EPOLL_CLOEXEC: u32 = 0o2000000;

/// eventfd2's flags: reads take 1 at a time; and O_NONBLOCK and O_CLOEXEC
/// under names of their own.
pub const EFD_SEMAPHORE: u32 = 1;
pub const EFD_NONBLOCK: u32 = O_NONBLOCK;
pub const EFD_CLOEXEC: u32 = O_CLOEXEC;
