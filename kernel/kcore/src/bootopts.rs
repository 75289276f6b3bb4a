//! Boot options: a small `key=value` file in the ramdisk.
//!
//! The bootloader gives the kernel no command line, so xtask writes
//! `etc/boot.conf` into the ramdisk archive. One option per line, `#` starts a
//! comment. An unknown key or a bad value is reported (the kernel logs it and
//! keeps the default) rather than silently ignored.

/// Lowest and highest tick rate the kernel accepts, in Hz.
pub const HZ_RANGE: core::ops::RangeInclusive<u32> = 100..=10_000;

/// Where the clock tick comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickSource {
    /// The 8254 programmable interval timer on IRQ 0.
    Pit,
    /// The local APIC timer, calibrated against the PIT.
    Apic,
    /// The HPET's timer 0, routed to IRQ 0 in its legacy replacement mode
    /// (lab 3.1).
    Hpet,
}

/// What the kernel does once it is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Start the init program.
    Normal,
    /// Run the in-kernel self-tests, then power off with their result.
    SelfTest,
}

/// How the kernel's locks wait (kernel/src/sync.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// Ticket locks on real hardware, test-and-set under a hypervisor.
    Auto,
    /// Ticket locks (fair: first come, first served) whatever the machine.
    Ticket,
    /// Test-and-set locks (whoever sees it free first) whatever the machine.
    TestAndSet,
}

/// The parsed options, with defaults for everything not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootOptions<'a> {
    pub hz: u32,
    pub tick: TickSource,
    pub mode: Mode,
    /// Path of the first user program.
    pub init: &'a str,
    /// `root=/dev/vda`: the disk init mounts as `/` (its own business:
    /// the kernel shows it in /proc/cmdline, as Linux does).
    pub root: &'a str,
    /// `randomize_va_space=N`: how much exec randomises a new address
    /// space (`crate::aslr`), until root writes
    /// /proc/sys/kernel/randomize_va_space.
    pub randomize_va_space: u32,
    /// The text the options came from, for the repeated `init_arg` lines.
    text: &'a str,
    /// A deliberate crash to check the exception reports (`crash=pagefault`).
    pub crash: Option<&'a str>,
    /// Files to send to the host at power-off, comma-separated.
    pub export: &'a str,
    /// `lock=auto|ticket|tas`.
    pub lock: LockKind,
    /// `quiet=1`: the kernel logs warnings and errors only.
    pub quiet: bool,
    /// `hold_panic=1`: a lock held too long panics instead of warning
    /// (Linux's `softlockup_panic`).
    pub hold_panic: bool,
    /// `loglevel=N`: log lines reach the console only below level N
    /// (Linux's levels: 3 errors, 4 warnings, 6 information).
    pub loglevel: u8,
    /// `slice_ms=N`: a thread's time slice, in milliseconds.
    pub slice_ms: u32,
    /// `profhz=N`: profil samples N times a second (0: at every tick).
    /// N must divide hz.
    pub profhz: u32,
}

impl Default for BootOptions<'_> {
    fn default() -> Self {
        BootOptions {
            hz: 1000,
            tick: TickSource::Pit,
            mode: Mode::Normal,
            init: "/bin/init",
            root: "",
            randomize_va_space: crate::aslr::LEVEL_DEFAULT,
            text: "",
            crash: None,
            export: "",
            lock: LockKind::Auto,
            quiet: false,
            hold_panic: false,
            loglevel: crate::kmsg::DEFAULT_CONSOLE_LEVEL,
            slice_ms: 10,
            profhz: 0,
        }
    }
}

/// One line that could not be used, with the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadOption<'a> {
    pub line: &'a str,
    pub reason: &'static str,
}

/// Every key the kernel knows, in the order `cargo xtask help` lists them.
/// One a line, so that a lab's patch adding one touches no other.
pub const KEYS: &[&str] = &[
    "hz",         // the clock's rate
    "tick",       // its source
    "mode",       // normal, or the self-tests
    "init",       // the first program
    "init_arg",   // its arguments, one a line
    "root",       // the disk init mounts as /
    "crash",      // a deliberate kernel crash, for the crash suites
    "export",     // guest files to send home at power-off
    "lock",       // the spinlocks' discipline
    "hold_panic", // a lock held too long panics
    "loglevel",   // the console's log level
    "quiet",      // warnings and errors only (lab 1.1)
    "slice_ms",   // the time slice (lab 3.2)
    "profhz",     // profil's own rate (lab 9.1)
    // Address-space layout randomisation, 0 to 2.
    "randomize_va_space",
];

/// Checks one `key=value` line as the kernel will read it: None if the
/// kernel takes it, else the reason it would ignore it (the kernel's own
/// words, so a tool that writes boot options can refuse them first).
pub fn check_line(line: &str) -> Option<&'static str> {
    BootOptions::default().apply(line).err()
}

impl<'a> BootOptions<'a> {
    /// Parses `text`, calling `report` for each line it cannot use.
    pub fn parse(text: &'a str, mut report: impl FnMut(BadOption<'a>)) -> Self {
        let mut opts = BootOptions {
            text,
            ..BootOptions::default()
        };
        for raw in text.lines() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if let Err(reason) = opts.apply(line) {
                report(BadOption { line, reason });
            }
        }
        opts
    }

    fn apply(&mut self, line: &'a str) -> Result<(), &'static str> {
        let (key, value) = line.split_once('=').ok_or("expected key=value")?;
        let value = value.trim();
        match key.trim() {
            "root" => self.root = value,
            "randomize_va_space" => {
                self.randomize_va_space = match value {
                    "0" => 0,
                    "1" => 1,
                    "2" => 2,
                    _ => return Err("randomize_va_space must be 0, 1 or 2"),
                }
            }
            "hz" => {
                let hz: u32 = value.parse().map_err(|_| "hz is not a number")?;
                if !HZ_RANGE.contains(&hz) {
                    return Err("hz must be between 100 and 10000");
                }
                self.hz = hz;
            }
            "tick" => {
                self.tick = match value {
                    "pit" => TickSource::Pit,
                    "apic" => TickSource::Apic,
                    "hpet" => TickSource::Hpet,
                    _ => return Err("tick must be pit, apic or hpet"),
                }
            }
            "mode" => {
                self.mode = match value {
                    "normal" => Mode::Normal,
                    "selftest" => Mode::SelfTest,
                    _ => return Err("mode must be normal or selftest"),
                }
            }
            "init" if value.starts_with('/') => self.init = value,
            "init" => return Err("init must be an absolute path"),
            "init_arg" => {} // read by init_args(), one argument per line

            "lock" => {
                self.lock = match value {
                    "auto" => LockKind::Auto,
                    "ticket" => LockKind::Ticket,
                    "tas" => LockKind::TestAndSet,
                    _ => return Err("lock must be auto, ticket or tas"),
                }
            }
            "quiet" => {
                self.quiet = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err("quiet must be 0 or 1"),
                }
            }
            "loglevel" => {
                let level: u8 = value.parse().map_err(|_| "loglevel is not a number")?;
                if level > 8 {
                    return Err("loglevel must be between 0 and 8");
                }
                self.loglevel = level;
            }
            "hold_panic" => {
                self.hold_panic = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err("hold_panic must be 0 or 1"),
                }
            }
            "slice_ms" => {
                let ms: u32 = value.parse().map_err(|_| "slice_ms is not a number")?;
                if !(1..=1000).contains(&ms) {
                    return Err("slice_ms must be between 1 and 1000");
                }
                self.slice_ms = ms;
            }
            // Checked against hz by the kernel, which knows both.
            "profhz" => {
                let profhz: u32 = value.parse().map_err(|_| "profhz is not a number")?;
                if !HZ_RANGE.contains(&profhz) {
                    return Err("profhz must be between 100 and 10000");
                }
                self.profhz = profhz;
            }
            "crash" => self.crash = Some(value),
            "export" => self.export = value,
            _ => return Err("unknown option"),
        }
        Ok(())
    }
}

impl<'a> BootOptions<'a> {
    /// The options on one line, as `/proc/cmdline` shows them: each
    /// `key=value` line without its comment, separated by spaces.
    pub fn cmdline(&self) -> alloc::string::String {
        let lines: alloc::vec::Vec<&str> = self
            .text
            .lines()
            .map(|raw| raw.split('#').next().unwrap_or("").trim())
            .filter(|line| !line.is_empty())
            .collect();
        let mut out = lines.join(" ");
        out.push('\n');
        out
    }

    /// Arguments for init, one `init_arg=` line each, in order:
    /// `cargo xtask run -- PROGRAM ARGS`. Each is written with
    /// `encode_arg`; `InitArg::bytes` gives the argument back byte for byte.
    pub fn init_args(&self) -> impl Iterator<Item = InitArg<'a>> + 'a {
        self.text
            .lines()
            .filter_map(|line| line.strip_prefix("init_arg="))
            .map(InitArg)
    }
}

/// Writes `arg` as the value of an `init_arg=` line: every byte as it is,
/// except `%`, line breaks and the other control characters, which become
/// `%XX` (two hex digits). So an argument with a newline, a `#`, spaces at
/// either end, quotes or any UTF-8 comes back exactly, and one line is one
/// argument (an empty argument is an empty value).
pub fn encode_arg(arg: &str, out: &mut impl core::fmt::Write) -> core::fmt::Result {
    for c in arg.chars() {
        if c == '%' || c.is_ascii_control() {
            write!(out, "%{:02X}", c as u32)?;
        } else {
            out.write_char(c)?;
        }
    }
    Ok(())
}

/// One argument for init, as `encode_arg` wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitArg<'a>(&'a str);

impl<'a> InitArg<'a> {
    /// The argument's bytes, decoded. A `%` not followed by two hex digits
    /// stands for itself.
    pub fn bytes(self) -> impl Iterator<Item = u8> + 'a {
        let raw = self.0.as_bytes();
        let mut i = 0;
        core::iter::from_fn(move || {
            let byte = *raw.get(i)?;
            let hex = |b: u8| (b as char).to_digit(16);
            if byte == b'%'
                && let (Some(hi), Some(lo)) = (
                    raw.get(i + 1).and_then(|&b| hex(b)),
                    raw.get(i + 2).and_then(|&b| hex(b)),
                )
            {
                i += 3;
                return Some((hi * 16 + lo) as u8);
            }
            i += 1;
            Some(byte)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(text: &str) -> (BootOptions<'_>, Vec<BadOption<'_>>) {
        let mut bad = Vec::new();
        let opts = BootOptions::parse(text, |b| bad.push(b));
        (opts, bad)
    }

    #[test]
    fn the_command_line_is_the_options_on_one_line() {
        let (opts, bad) = parse_all("hz=100\n# a comment\n\nroot=/dev/vda # the disk\n");
        assert!(bad.is_empty());
        assert_eq!(opts.root, "/dev/vda");
        assert_eq!(opts.cmdline(), "hz=100 root=/dev/vda\n");
    }

    #[test]
    fn check_line_agrees_with_parse() {
        assert_eq!(check_line("lock=tas"), None);
        assert_eq!(
            check_line("lock=fair"),
            Some("lock must be auto, ticket or tas")
        );
        assert_eq!(check_line("slice=3"), Some("unknown option"));
        for key in KEYS {
            assert_ne!(
                check_line(&format!("{key}=x")),
                Some("unknown option"),
                "{key} is listed but unknown"
            );
        }
    }

    #[test]
    fn defaults_when_empty() {
        let (opts, bad) = parse_all("");
        assert_eq!(opts, BootOptions::default());
        assert!(bad.is_empty());
        assert_eq!(opts.hz, 1000);
        assert_eq!(opts.init_args().count(), 0);
    }

    #[test]
    fn reads_every_key_and_skips_comments() {
        let text = "# boot\nhz = 250\ntick=apic  # the other source\nmode=selftest\ninit=/bin/sh\ninit_arg=-c\ninit_arg=ls /bin | cat\ncrash=pagefault\nexport=/gmon.out,/x\nlock=ticket\n";
        let (opts, bad) = parse_all(text);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(opts.hz, 250);
        assert_eq!(opts.tick, TickSource::Apic);
        assert_eq!(opts.mode, Mode::SelfTest);
        assert_eq!(opts.init, "/bin/sh");
        let args: Vec<Vec<u8>> = opts.init_args().map(|a| a.bytes().collect()).collect();
        assert_eq!(args, [&b"-c"[..], b"ls /bin | cat"]);
        assert_eq!(opts.crash, Some("pagefault"));
        assert_eq!(opts.export, "/gmon.out,/x");
        assert_eq!(opts.lock, LockKind::Ticket);
        assert_eq!(parse_all("lock=tas").0.lock, LockKind::TestAndSet);
        assert_eq!(parse_all("lock=auto").0.lock, LockKind::Auto);
    }

    #[test]
    fn bad_values_keep_defaults_and_are_reported() {
        let text = "hz=99\nhz=10001\nhz=fast\ntick=tsc\nbogus=1\nnoequals\ninit=bin/sh\nlock=fair";
        let (opts, bad) = parse_all(text);
        assert_eq!(
            opts,
            BootOptions {
                text,
                ..BootOptions::default()
            }
        );
        let reasons: Vec<_> = bad.iter().map(|b| b.reason).collect();
        assert_eq!(
            reasons,
            [
                "hz must be between 100 and 10000",
                "hz must be between 100 and 10000",
                "hz is not a number",
                "tick must be pit, apic or hpet",
                "unknown option",
                "expected key=value",
                "init must be an absolute path",
                "lock must be auto, ticket or tas",
            ]
        );
    }

    #[test]
    fn hz_bounds_are_inclusive() {
        assert_eq!(parse_all("hz=100").0.hz, 100);
        assert_eq!(parse_all("hz=10000").0.hz, 10000);
    }

    /// Every argument comes back byte for byte through a boot.conf line:
    /// newlines, carriage returns, quotes, `#`, `%`, spaces at the ends,
    /// empty arguments, non-ASCII.
    #[test]
    fn init_args_survive_the_file_exactly() {
        let args = [
            "line one\nline two",
            "",
            "it's \"quoted\"",
            "h\u{e9}llo w\u{f6}rld \u{2713}",
            "100%",
            "%41 is not A",
            "#not a comment",
            "  spaced  ",
            "tab\there\r\n",
            "=",
        ];
        let mut text = String::from("hz=100\n");
        for arg in args {
            text.push_str("init_arg=");
            encode_arg(arg, &mut text).unwrap();
            text.push('\n');
        }
        text.push_str("tick=apic\n");
        let (opts, bad) = parse_all(&text);
        assert!(bad.is_empty(), "{bad:?}");
        let back: Vec<String> = opts
            .init_args()
            .map(|a| String::from_utf8(a.bytes().collect()).unwrap())
            .collect();
        assert_eq!(back, args);
        assert_eq!((opts.hz, opts.tick), (100, TickSource::Apic));
        assert_eq!(
            text.lines().count(),
            args.len() + 2,
            "one line per argument"
        );
    }
}
