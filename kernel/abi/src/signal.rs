//! Signals and interval timers: numbers, flags and the structures the kernel
//! and user space exchange, in Linux x86_64's layout.
//!
//! The signal frame a handler runs on is Linux's `rt_sigframe`: the return
//! address (the `sa_restorer` trampoline that calls `rt_sigreturn`), then a
//! `UContext`, then a `SigInfo`. A handler declared with `SA_SIGINFO` gets
//! pointers to the last two, and `uc_mcontext.gregs[REG_RIP]` is the pc the
//! signal interrupted: what the SIGPROF profil emulation reads.

/// A set of signals: bit `n - 1` stands for signal `n` (the kernel's
/// 64-bit `sigset_t`).
pub type SigSet = u64;

pub const SIGHUP: u32 = 1;
pub const SIGINT: u32 = 2;
pub const SIGQUIT: u32 = 3;
pub const SIGILL: u32 = 4;
pub const SIGTRAP: u32 = 5;
pub const SIGABRT: u32 = 6;
pub const SIGBUS: u32 = 7;
pub const SIGFPE: u32 = 8;
pub const SIGKILL: u32 = 9;
pub const SIGUSR1: u32 = 10;
pub const SIGSEGV: u32 = 11;
pub const SIGUSR2: u32 = 12;
pub const SIGPIPE: u32 = 13;
pub const SIGALRM: u32 = 14;
pub const SIGTERM: u32 = 15;
pub const SIGSTKFLT: u32 = 16;
pub const SIGCHLD: u32 = 17;
pub const SIGCONT: u32 = 18;
pub const SIGSTOP: u32 = 19;
pub const SIGTSTP: u32 = 20;
pub const SIGTTIN: u32 = 21;
pub const SIGTTOU: u32 = 22;
pub const SIGURG: u32 = 23;
pub const SIGXCPU: u32 = 24;
pub const SIGXFSZ: u32 = 25;
pub const SIGVTALRM: u32 = 26;
pub const SIGPROF: u32 = 27;
pub const SIGWINCH: u32 = 28;
pub const SIGIO: u32 = 29;
pub const SIGPWR: u32 = 30;
pub const SIGSYS: u32 = 31;
/// The real-time signals, 32 to 64 (the C libraries keep the first two or
/// three for themselves and call the next one SIGRTMIN): each one sent is
/// queued and delivered, where a standard signal sent again while pending
/// is one.
pub const SIGRTMIN: u32 = 32;
pub const SIGRTMAX: u32 = 64;
/// One more than the highest signal number.
pub const NSIG: u32 = 65;

/// The names of signals 1..=31.
pub const SIGNAL_NAMES: [&str; 31] = [
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
];

/// The bit of `signal` in a `SigSet`.
pub const fn sig_bit(signal: u32) -> SigSet {
    1 << (signal - 1)
}

/// `sa_handler` values that are not addresses.
pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

// sa_flags.
pub const SA_NOCLDSTOP: u64 = 1;
pub const SA_NOCLDWAIT: u64 = 2;
pub const SA_SIGINFO: u64 = 4;
pub const SA_RESTORER: u64 = 0x0400_0000;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_RESTART: u64 = 0x1000_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;

// rt_sigprocmask `how`.
pub const SIG_BLOCK: u32 = 0;
pub const SIG_UNBLOCK: u32 = 1;
pub const SIG_SETMASK: u32 = 2;

/// The kernel's `struct sigaction` (what `rt_sigaction` reads and writes;
/// C libraries translate their own, larger one).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigAction {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: SigSet,
}

// si_code values.
pub const SI_USER: i32 = 0;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TIMER: i32 = -2;
/// sigqueue(3)'s code, and tgkill's.
pub const SI_QUEUE: i32 = -1;
pub const SI_TKILL: i32 = -6;
pub const SEGV_MAPERR: i32 = 1;
pub const SEGV_ACCERR: i32 = 2;
/// SIGBUS: an address with nothing behind it (past the end of a mapped file).
pub const BUS_ADRERR: i32 = 2;
pub const ILL_ILLOPC: i32 = 1;
pub const FPE_INTDIV: i32 = 1;
pub const TRAP_BRKPT: i32 = 1;
pub const CLD_EXITED: i32 = 1;
pub const CLD_KILLED: i32 = 2;
pub const CLD_DUMPED: i32 = 3;
pub const CLD_STOPPED: i32 = 5;
pub const CLD_CONTINUED: i32 = 6;

/// `siginfo_t`: 128 bytes. Which of the union's fields mean something
/// depends on the signal: `pid`/`uid` for kill and SIGCHLD (with `status`,
/// `utime`, `stime`), `addr` (the same eight bytes as `pid`/`uid`) for
/// faults.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigInfo {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
    _pad: i32,
    /// si_pid and si_uid, or si_addr.
    pub pid_or_addr: u64,
    /// si_status for SIGCHLD.
    pub status: i32,
    _pad2: i32,
    pub utime: i64,
    pub stime: i64,
    _rest: [u64; 10],
}

impl SigInfo {
    pub const fn new(signo: u32, code: i32) -> SigInfo {
        SigInfo {
            signo: signo as i32,
            errno: 0,
            code,
            _pad: 0,
            pid_or_addr: 0,
            status: 0,
            _pad2: 0,
            utime: 0,
            stime: 0,
            _rest: [0; 10],
        }
    }

    /// si_pid.
    pub fn pid(&self) -> i32 {
        self.pid_or_addr as u32 as i32
    }

    /// si_addr.
    pub fn addr(&self) -> u64 {
        self.pid_or_addr
    }

    /// The 8 bytes after si_pid and si_uid: si_value (sigqueue), or
    /// si_status (SIGCHLD) in the low half, or si_fd (SIGIO) there.
    pub fn value(&self) -> u64 {
        (self.status as u32 as u64) | ((self._pad2 as u32 as u64) << 32)
    }

    pub fn set_value(&mut self, value: u64) {
        self.status = value as u32 as i32;
        self._pad2 = (value >> 32) as u32 as i32;
    }
}

/// `stack_t`, for sigaltstack.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackT {
    pub sp: u64,
    pub flags: i32,
    _pad: i32,
    pub size: u64,
}

impl StackT {
    pub const fn new(sp: u64, flags: i32, size: u64) -> StackT {
        StackT {
            sp,
            flags,
            _pad: 0,
            size,
        }
    }
}

/// ss_flags.
pub const SS_ONSTACK: i32 = 1;
pub const SS_DISABLE: i32 = 2;
/// The smallest alternate stack sigaltstack accepts.
pub const MINSIGSTKSZ: u64 = 2048;

// The arithmetic and control flags of `MContext::gregs[REG_EFL]` that user
// code sees and may set (rflags bits).
pub const EFL_CF: u64 = 0x1;
pub const EFL_PF: u64 = 0x4;
pub const EFL_AF: u64 = 0x10;
pub const EFL_ZF: u64 = 0x40;
pub const EFL_SF: u64 = 0x80;
pub const EFL_TF: u64 = 0x100;
pub const EFL_DF: u64 = 0x400;
pub const EFL_OF: u64 = 0x800;
pub const EFL_RF: u64 = 0x1_0000;
pub const EFL_AC: u64 = 0x4_0000;

// Indices into `MContext::gregs` (glibc's and musl's REG_* names).
pub const REG_R8: usize = 0;
pub const REG_R15: usize = 7;
pub const REG_RDI: usize = 8;
pub const REG_RSI: usize = 9;
pub const REG_RBP: usize = 10;
pub const REG_RBX: usize = 11;
pub const REG_RDX: usize = 12;
pub const REG_RAX: usize = 13;
pub const REG_RCX: usize = 14;
pub const REG_RSP: usize = 15;
pub const REG_RIP: usize = 16;
pub const REG_EFL: usize = 17;
pub const REG_CSGSFS: usize = 18;
pub const REG_ERR: usize = 19;
pub const REG_TRAPNO: usize = 20;
pub const REG_OLDMASK: usize = 21;
pub const REG_CR2: usize = 22;

/// `mcontext_t` (the kernel's `struct sigcontext`): the interrupted
/// registers in `gregs`, then a pointer to the floating-point state
/// (0 while user programs use no SSE state the kernel saves).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MContext {
    pub gregs: [u64; 23],
    pub fpstate: u64,
    _reserved: [u64; 8],
}

/// The kernel's `struct ucontext`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UContext {
    pub flags: u64,
    pub link: u64,
    pub stack: StackT,
    pub mcontext: MContext,
    pub sigmask: SigSet,
}

impl UContext {
    pub const fn zeroed() -> UContext {
        UContext {
            flags: 0,
            link: 0,
            stack: StackT::new(0, 0, 0),
            mcontext: MContext {
                gregs: [0; 23],
                fpstate: 0,
                _reserved: [0; 8],
            },
            sigmask: 0,
        }
    }
}

/// The frame a handler starts on (`struct rt_sigframe`): its return address
/// is the restorer, which calls `rt_sigreturn` with rsp just past it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SigFrame {
    pub restorer: u64,
    pub uc: UContext,
    pub info: SigInfo,
}

// Interval timers.
pub const ITIMER_REAL: u32 = 0;
pub const ITIMER_VIRTUAL: u32 = 1;
pub const ITIMER_PROF: u32 = 2;

/// `struct timeval`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeval {
    pub tv_sec: i64,
    pub tv_usec: i64,
}

/// `struct itimerval`: the reload interval, then the time to the next expiry.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItimerVal {
    pub interval: Timeval,
    pub value: Timeval,
}

// The layouts Linux programs compile against.
const _: () = assert!(size_of::<SigAction>() == 32);
const _: () = assert!(size_of::<SigInfo>() == 128);
const _: () = assert!(size_of::<StackT>() == 24);
const _: () = assert!(size_of::<MContext>() == 256);
const _: () = assert!(core::mem::offset_of!(UContext, mcontext) == 40);
const _: () = assert!(size_of::<UContext>() == 304);
const _: () = assert!(core::mem::offset_of!(SigFrame, info) == 312);
