//! Command-line options of `cargo xtask`, parsed by hand so that every
//! mistake is a one-line message.

pub const USAGE: &str = "\
usage: cargo xtask <command> [options] [-- PROGRAM ARGS...]

commands:
  run     build everything and boot the kernel in QEMU, serial console on this terminal,
          its root file system on target/root.img (ext3, made from the programs on first
          use and kept: a file written in one boot is there in the next; /tmp is memory)
          (with -- PROGRAM ARGS: run that one program, power off with its exit status)
  test    run every test: host unit tests, then the in-QEMU suites; ends with 'N passed, M failed'
          (`test -- NAME...` runs only the parts and suites whose names start so: the
          parts are listed at the end of this text)
  image   build the disk image and print its path
  gdb     boot as run does, paused under GDB with the kernel's symbols (helpers: tick, sample,
          cow, user NAME; docs/gdb.md walks through them)
  prof    profile a C program: `prof prog.c [more.c...] [-- ARGS]` compiles it with
          musl-gcc -pg -static -O2 -g and the project's gprof runtime (libgmon.a), runs it
          with the kernel's native profil, brings gmon.out home and prints GNU gprof's flat
          profile and call graph; also a guest program (/bin/callgraph) or an ELF built
          elsewhere for gprof (./a.out; a dynamic one from gcc -pg runs with its loader and
          libraries, and the project's libgmon.so in LD_PRELOAD: see --way)
  kprof   profile the kernel itself: `kprof [-- PROGRAM ARGS]` boots the profiled kernel
          (--kprof), runs the program (default: the kernel's test workload, /bin/kgmon -w
          2000) with kernel profiling on (kgmon(2)), brings the kernel's gmon.out home and
          prints GNU gprof's flat profile and call graph of the kernel ELF (--graph FILE.svg
          draws it too)
          `kprof --user --kernel -- PROGRAM ARGS` (PROGRAM built for gprof, as for prof) gives
          both profiles of one run side by side: the program's and the kernel's
  bench   the same static benchmark on this kernel and on Debian's Linux in the same QEMU:
          system calls, fork/exec, context switches, profiling; a table, JSON, Markdown and
          a chart in target/bench/ (--quick: a smoke run)
  fuzz    run the system-call fuzzer (/bin/sysfuzz) for --minutes N (default 1), from
          --seed S (default: random; a failure prints the seed to replay), --workers W
  book    render docs/book/ to HTML with mdBook (installed once into target/tools) in
          target/book/, with its figures and appendices; every link is checked
  rootfs  make target/debian-root/root.img, a Debian 12 root file system (bash, coreutils, grep,
          sed, findutils, procps, python3 and its tests) from Debian's packages (apt-get
          download, dpkg-deb, mke2fs -d; fetched once, kept), and print its path
  pytests Python's regression tests (Debian's python3 and its test package) on this kernel and
          on Debian's Linux, each booted on a copy of the Debian root in the same QEMU: a table
          of tests run, passed, skipped and failed per module, and a failure for every test that
          passes on Linux only and is not listed in docs/syscalls.md (`pytests -- MODULE...`
          for those modules, `-- all` for every one; default the short set)
  figures remake the book's SVG figures (docs/book/figures/*.svg) from their graphviz sources
  lab     the book's labs: `lab` lists them, `lab start ID` makes a git branch lab/ID with
          that piece of the kernel taken out, `lab ID` runs its check (done, or what is missing)
  help    this text

options:
  --accel tcg|kvm    QEMU accelerator (default tcg: faster to boot under nested virtualization)
  --hz N             clock tick rate, 100..=10000 (default 1000)
  --cpus N           processors QEMU gives the machine (-smp N), 1..=16; the kernel
                     starts and schedules on all of them (default 1: what GDB steps
                     through predictably; the test command also runs its suites on 4)
  --tick pit|apic|hpet  tick source (default pit)
  --uefi             boot with UEFI firmware (OVMF) instead of BIOS
  --release          build the kernel optimised
  --kprof            (run, gdb, test, image) boot the profiled kernel: built with
                     -Z instrument-mcount (into target/mcount/), so that kgmon(2) records
                     the kernel's call graph as well as its histogram (kprof implies it)
  --boot KEY=VALUE   a boot option for the kernel (repeatable): mode=selftest,
                     init=/bin/sh, crash=KIND, lock=auto|ticket|tas; checked before
                     anything is built
  --verbose          show the bootloader's own log lines before the kernel's
  --timeout SECONDS  power QEMU off after this long (default: none for run; for test 300,
                     600 to 1800 for the suites that run more, as soak, musl and glibc)
  --add HOST[:GUEST] put a host file into the ramdisk (default guest path /bin/NAME); a
                     dynamically linked program brings its loader and libraries along
  --export GUESTPATH at power-off, copy this guest file to target/guest-out/ (repeatable)
  --disk FILE        give the machine FILE, a raw image, as one more virtio disk (written in
                     place; repeatable, 4 disks in all): run's root disk is /dev/vda and these
                     follow it, /dev/vdb on; with --add, or outside run, they start at /dev/vda
  --jobs N           (test) QEMU suites run N at a time (default: one per host core;
                     a suite on more than one CPU, or counting ticks, runs alone); 1 runs
                     them one by one
  --fresh            (run, gdb) make the root disk target/root.img again from the programs just
                     built (files written in it are lost), or the Debian root with --root debian
  --root debian      (run, gdb) boot on the Debian root file system (`rootfs` above) instead:
                     init logs root in to Debian's bash
  --graph FILE.svg   (prof) also draw the call graph (gprof2dot + graphviz)
  --cflags FLAGS     (prof) compile the C sources with these instead of -O2 -g
  --all              (prof) sum the profiles of every process the program made (gprof -s)
  --way native|sigprof|both  (prof) how a dynamically linked glibc program (gcc -pg) samples:
                     the native profil through the project's libgmon.so in LD_PRELOAD
                     (default), glibc's own runtime, whose profil() is a SIGPROF emulation,
                     or both in turns, with each way's run time and samples (/bin/profways)
  --batch FILE       (gdb) run the gdb commands in FILE instead of an interactive session
  --minutes N, --seed S, --workers W   (fuzz) how long, from which seed, how many processes
  --quick            (bench) fewer iterations, one rate
";

/// Most processors `--cpus` gives the machine (the kernel's
/// `arch::percpu::MAX_CPUS`).
pub const MAX_CPUS: u32 = 16;

/// How `prof` has a dynamically linked glibc program sample its pc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// The project's libgmon.so in `LD_PRELOAD`: the native profil(2).
    Native,
    /// glibc's own gmon: profil() emulated with ITIMER_PROF and SIGPROF.
    Sigprof,
    /// Both, in turns, with what each costs (/bin/profways).
    Both,
}

/// Options shared by every command that boots the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub accel: Accel,
    pub hz: u32,
    /// `--cpus N`: QEMU's `-smp N`.
    pub cpus: u32,
    pub tick: Tick,
    pub uefi: bool,
    pub release: bool,
    /// `--kprof`: the profiled kernel (every function calls mcount).
    pub kprof: bool,
    pub timeout: Option<u64>,
    /// The program (and its arguments) after `--`.
    pub program: Vec<String>,
    /// Host files to add to the ramdisk, with their guest paths.
    pub add: Vec<(String, String)>,
    /// Guest files to bring home at power-off.
    pub export: Vec<String>,
    /// `prof --graph FILE.svg`.
    pub graph: Option<std::path::PathBuf>,
    /// `gdb --batch FILE`.
    pub batch: Option<std::path::PathBuf>,
    /// `fuzz --minutes N --seed S --workers W`.
    pub fuzz: Fuzz,
    /// `bench --quick`.
    pub quick: bool,
    /// `prof --cflags "..."`: the flags C sources are compiled with.
    pub cflags: Option<String>,
    /// `prof --all`: every process's profile, summed.
    pub all: bool,
    /// `kprof --user`: the program's own profile too, beside the kernel's.
    pub user: bool,
    /// `kprof --kernel`: said explicitly (kprof always profiles the kernel).
    pub kernel_side: bool,
    /// `prof --way`: how a dynamic glibc program samples.
    pub way: Way,
    /// `--boot KEY=VALUE` lines for the kernel's boot options, checked.
    pub boot: Vec<String>,
    /// `--verbose`: the bootloader's own log lines too.
    pub verbose: bool,
    /// The machine's virtio disks in order (`/dev/vda` first): raw
    /// images, from `--disk FILE` or what a suite or `run` puts first.
    pub disks: Vec<std::path::PathBuf>,
    /// `run --fresh`: make the root disk image again from the programs.
    pub fresh: bool,
    /// `run --root debian`: boot on the Debian root (xtask/src/rootfs.rs)
    /// instead of target/root.img.
    pub debian_root: bool,
    /// `test --jobs N`: how many QEMU suites run at once (None: one per
    /// host core).
    pub jobs: Option<u32>,
    /// Where exported guest files go: `target/guest-out/`, or a folder of
    /// a suite's own in it (so that suites running at once keep apart).
    pub guest_out: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fuzz {
    pub minutes: Option<u64>,
    pub seed: Option<u64>,
    pub workers: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    Tcg,
    Kvm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tick {
    Pit,
    Apic,
    Hpet,
}

impl Tick {
    pub fn name(self) -> &'static str {
        match self {
            Tick::Pit => "pit",
            Tick::Apic => "apic",
            Tick::Hpet => "hpet",
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            accel: Accel::Tcg,
            hz: 1000,
            cpus: 1,
            tick: Tick::Pit,
            uefi: false,
            release: false,
            kprof: false,
            timeout: None,
            program: Vec::new(),
            add: Vec::new(),
            export: Vec::new(),
            graph: None,
            batch: None,
            fuzz: Fuzz::default(),
            quick: false,
            cflags: None,
            all: false,
            user: false,
            kernel_side: false,
            way: Way::Native,
            boot: Vec::new(),
            verbose: false,
            disks: Vec::new(),
            fresh: false,
            debian_root: false,
            jobs: None,
            guest_out: None,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Run(Options),
    Image(Options),
    Test(Options),
    Prof(Options),
    Kprof(Options),
    Gdb(Options),
    Fuzz(Options),
    Bench(Options),
    /// `lab` (the list), `lab ID` (one lab's check) or `lab start ID`.
    Lab(LabCommand),
    /// `figures`: remake the book's SVGs from their sources.
    Figures,
    /// `book`: the book as HTML.
    Book,
    /// `rootfs`: the Debian root image (xtask/src/rootfs.rs).
    Rootfs,
    /// `pytests [-- MODULE... | all]`: Python's regression tests on both
    /// kernels (xtask/src/pytests.rs); the modules, none for the short set.
    Pytests(Options, Vec<String>),
}

/// What `cargo xtask lab` was asked.
#[derive(Debug, PartialEq, Eq)]
pub enum LabCommand {
    /// Every exercise, and which labs are started.
    List,
    /// A git branch `lab/ID` with the lab's piece taken out.
    Start(String),
    /// The lab's check, on the tree as it is.
    Check(String),
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((command, rest)) = args.split_first() else {
        return Err("no command given; try `cargo xtask help`".into());
    };
    let make: fn(Options) -> Command = match command.as_str() {
        "help" | "-h" | "--help" => return Ok(Command::Help),
        "figures" if rest.is_empty() => return Ok(Command::Figures),
        "book" if rest.is_empty() => return Ok(Command::Book),
        "rootfs" if rest.is_empty() => return Ok(Command::Rootfs),
        "rootfs" => return Err("usage: cargo xtask rootfs (no options)".into()),
        "book" => return Err("usage: cargo xtask book (no options)".into()),
        "figures" => return Err("usage: cargo xtask figures (no options)".into()),
        "lab" => {
            return match rest {
                [] => Ok(Command::Lab(LabCommand::List)),
                [start, id] if start == "start" && !id.starts_with('-') => {
                    Ok(Command::Lab(LabCommand::Start(id.clone())))
                }
                [id] if !id.starts_with('-') && id != "start" => {
                    Ok(Command::Lab(LabCommand::Check(id.clone())))
                }
                _ => Err("usage: cargo xtask lab [ID | start ID] (no options)".into()),
            };
        }
        "pytests" => {
            let mut opts = parse_options(rest, false)?;
            let modules = std::mem::take(&mut opts.program);
            let bad = modules.iter().find(|m| {
                *m != "all"
                    && !(m.starts_with("test_")
                        && m.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
            });
            if let Some(bad) = bad {
                return Err(format!(
                    "pytests: '{bad}' is not a module of Python's tests (test_os, test_posix, ...) or 'all'"
                ));
            }
            if modules.len() > 1 && modules.iter().any(|m| m == "all") {
                return Err("pytests: 'all' goes alone".into());
            }
            return Ok(Command::Pytests(opts, modules));
        }
        "run" => Command::Run,
        "image" => Command::Image,
        "test" => Command::Test,
        "prof" => Command::Prof,
        "kprof" => Command::Kprof,
        "gdb" => Command::Gdb,
        "fuzz" => Command::Fuzz,
        "bench" => Command::Bench,
        other => return Err(format!("unknown command '{other}'; try `cargo xtask help`")),
    };
    let is_prof = command == "prof";
    let takes_program = is_prof || matches!(command.as_str(), "run" | "gdb" | "test" | "kprof");
    let opts = parse_options(rest, is_prof)?;
    if !opts.program.is_empty() && !takes_program {
        return Err(format!("'{command}' takes no program after --"));
    }
    if opts.graph.is_some() && !is_prof && command != "kprof" {
        return Err("--graph only goes with prof and kprof".into());
    }
    if (opts.user || opts.kernel_side) && command != "kprof" {
        return Err("--user and --kernel only go with kprof".into());
    }
    if opts.kprof && !matches!(command.as_str(), "run" | "gdb" | "test" | "image" | "kprof") {
        return Err("--kprof only goes with run, gdb, test, image and kprof".into());
    }
    let mut opts = opts;
    if command == "kprof" {
        opts.kprof = true;
    }
    if opts.batch.is_some() && command != "gdb" {
        return Err("--batch only goes with gdb".into());
    }
    if opts.quick && command != "bench" {
        return Err("--quick only goes with bench".into());
    }
    if opts.fresh && !matches!(command.as_str(), "run" | "gdb") {
        return Err("--fresh only goes with run and gdb".into());
    }
    if opts.debian_root && !matches!(command.as_str(), "run" | "gdb") {
        return Err("--root only goes with run and gdb".into());
    }
    if opts.jobs.is_some() && command != "test" {
        return Err("--jobs only goes with test".into());
    }
    if opts.fuzz != Fuzz::default() && command != "fuzz" {
        return Err("--minutes, --seed and --workers only go with fuzz".into());
    }
    Ok(make(opts))
}

/// Keys of the boot options that have flags of their own, and the flag.
const BOOT_KEYS_WITH_FLAGS: [(&str, &str); 4] = [
    ("hz", "--hz"),
    ("tick", "--tick"),
    ("export", "--export"),
    ("init_arg", "-- PROGRAM ARGS"),
];

/// `--boot KEY=VALUE`: refused before anything is built if the kernel would
/// not take it (the kernel checks again, and says so in its log).
fn check_boot_option(line: &str) -> Result<(), String> {
    let Some((key, _)) = line.split_once('=') else {
        return Err(format!("--boot needs KEY=VALUE, not '{line}'"));
    };
    let key = key.trim();
    if let Some((_, flag)) = BOOT_KEYS_WITH_FLAGS.iter().find(|(k, _)| *k == key) {
        return Err(format!(
            "--boot {line}: {key} has a flag of its own: {flag}"
        ));
    }
    if !kcore::bootopts::KEYS.contains(&key) {
        // Every key, each that has a flag of its own named with it.
        let known: Vec<String> = kcore::bootopts::KEYS
            .iter()
            .copied()
            .map(
                |k| match BOOT_KEYS_WITH_FLAGS.iter().find(|(f, _)| *f == k) {
                    Some((_, flag)) => format!("{k} ({flag})"),
                    None => k.to_string(),
                },
            )
            .collect();
        return Err(format!(
            "--boot {line}: unknown key '{key}'; the kernel knows {}",
            known.join(", ")
        ));
    }
    match kcore::bootopts::check_line(line) {
        None => Ok(()),
        Some(reason) => Err(format!("--boot {line}: {reason}")),
    }
}

/// With `positional_program`, the first argument that is not an option
/// starts the program and its arguments (`cargo xtask prof /bin/x ARGS`).
fn parse_options(args: &[String], positional_program: bool) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = |name: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--accel" => {
                opts.accel = match value("--accel")?.as_str() {
                    "tcg" => Accel::Tcg,
                    "kvm" => Accel::Kvm,
                    v => return Err(format!("--accel must be tcg or kvm, not '{v}'")),
                }
            }
            "--hz" => {
                let v = value("--hz")?;
                opts.hz = v
                    .parse()
                    .ok()
                    .filter(|hz| (100..=10_000).contains(hz))
                    .ok_or_else(|| format!("--hz must be a number from 100 to 10000, not '{v}'"))?;
            }
            "--cpus" => {
                let v = value("--cpus")?;
                opts.cpus = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_CPUS).contains(n))
                    .ok_or_else(|| {
                        format!("--cpus must be a number from 1 to {MAX_CPUS}, not '{v}'")
                    })?;
            }
            "--tick" => {
                opts.tick = match value("--tick")?.as_str() {
                    "pit" => Tick::Pit,
                    "apic" => Tick::Apic,
                    "hpet" => Tick::Hpet,
                    v => return Err(format!("--tick must be pit, apic or hpet, not '{v}'")),
                }
            }
            "--timeout" => {
                let v = value("--timeout")?;
                opts.timeout = Some(v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    format!("--timeout must be a positive number of seconds, not '{v}'")
                })?);
            }
            "--add" => {
                let v = value("--add")?;
                let (host, guest) = match v.split_once(':') {
                    Some((host, guest)) => (host.to_string(), guest.to_string()),
                    None => {
                        let name = std::path::Path::new(&v)
                            .file_name()
                            .and_then(|n| n.to_str())
                            .unwrap_or("");
                        (v.clone(), format!("/bin/{name}"))
                    }
                };
                if host.is_empty() || !guest.starts_with('/') || guest.ends_with('/') {
                    return Err(format!("--add needs HOST[:/GUEST/PATH], not '{v}'"));
                }
                opts.add.push((host, guest));
            }
            "--disk" => {
                let v = value("--disk")?;
                let path = std::path::PathBuf::from(&v);
                if !path.is_file() || v.contains(',') {
                    return Err(format!(
                        "--disk needs an existing image file whose path has no commas (QEMU's option syntax), not '{v}'"
                    ));
                }
                if opts.disks.len() == kcore::virtio::MAX_DISKS {
                    return Err(format!(
                        "--disk is given at most {} times: the kernel drives /dev/vda to /dev/vdd",
                        kcore::virtio::MAX_DISKS
                    ));
                }
                opts.disks.push(path);
            }
            "--export" => {
                let v = value("--export")?;
                if !v.starts_with('/') || v.contains(',') {
                    return Err(format!(
                        "--export needs an absolute guest path without commas, not '{v}'"
                    ));
                }
                opts.export.push(v);
            }
            "--minutes" | "--seed" | "--workers" => {
                let v = value(arg)?;
                let n: u64 = v
                    .parse()
                    .map_err(|_| format!("{arg} needs a number, not '{v}'"))?;
                match arg.as_str() {
                    "--minutes" if n >= 1 => opts.fuzz.minutes = Some(n),
                    "--seed" => opts.fuzz.seed = Some(n),
                    "--workers" if (1..=16).contains(&n) => opts.fuzz.workers = Some(n),
                    _ => return Err(format!("{arg} {v} is out of range")),
                }
            }
            "--boot" => {
                let v = value("--boot")?;
                check_boot_option(&v)?;
                opts.boot.push(v);
            }
            "--verbose" => opts.verbose = true,
            "--graph" => opts.graph = Some(value("--graph")?.into()),
            "--cflags" => opts.cflags = Some(value("--cflags")?),
            "--batch" => opts.batch = Some(value("--batch")?.into()),
            "--uefi" => opts.uefi = true,
            "--quick" => opts.quick = true,
            "--fresh" => opts.fresh = true,
            "--root" => match value("--root")?.as_str() {
                "debian" => opts.debian_root = true,
                "programs" => opts.debian_root = false,
                other => {
                    return Err(format!("--root takes debian or programs, not '{other}'"));
                }
            },
            "--jobs" => {
                let v = value("--jobs")?;
                opts.jobs = Some(v.parse().ok().filter(|n| (1..=64).contains(n)).ok_or_else(
                    || format!("--jobs must be a number of suites from 1 to 64, not '{v}'"),
                )?);
            }
            "--all" => opts.all = true,
            "--user" => opts.user = true,
            // The kernel's profile: what kprof always gives (`--user
            // --kernel` reads as the two it prints).
            "--kernel" => opts.kernel_side = true,
            "--way" => {
                opts.way = match value("--way")?.as_str() {
                    "native" => Way::Native,
                    "sigprof" => Way::Sigprof,
                    "both" => Way::Both,
                    other => {
                        return Err(format!(
                            "--way takes native, sigprof or both, not '{other}'"
                        ));
                    }
                }
            }
            "--release" => opts.release = true,
            "--kprof" => opts.kprof = true,
            "--" => {
                opts.program = iter.cloned().collect();
                if opts.program.is_empty() {
                    return Err("-- must be followed by a program to run".into());
                }
                break;
            }
            other if positional_program && !other.starts_with('-') => {
                opts.program = std::iter::once(arg).chain(iter).cloned().collect();
                break;
            }
            other => return Err(format!("unknown option '{other}'; try `cargo xtask help`")),
        }
    }
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(line: &str) -> Result<Command, String> {
        parse(
            &line
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn defaults() {
        assert_eq!(parse_words("run"), Ok(Command::Run(Options::default())));
    }

    #[test]
    fn every_option() {
        let Ok(Command::Run(o)) = parse_words(
            "run --accel kvm --hz 250 --cpus 4 --tick apic --uefi --release --timeout 9 \
             --add a/b.out --add x:/y/z --export /gmon.out -- /bin/echo hi",
        ) else {
            panic!("did not parse")
        };
        assert_eq!(o.accel, Accel::Kvm);
        assert_eq!(o.cpus, 4);
        assert_eq!(
            (o.hz, o.tick, o.uefi, o.release, o.timeout),
            (250, Tick::Apic, true, true, Some(9))
        );
        assert_eq!(o.program, ["/bin/echo", "hi"]);
        assert_eq!(
            o.add,
            [
                ("a/b.out".to_string(), "/bin/b.out".to_string()),
                ("x".to_string(), "/y/z".to_string())
            ]
        );
        assert_eq!(o.export, ["/gmon.out"]);
        let Ok(Command::Run(o)) =
            parse_words("run --verbose --boot lock=ticket --boot mode=selftest")
        else {
            panic!("did not parse")
        };
        assert!(o.verbose);
        assert_eq!(o.boot, ["lock=ticket", "mode=selftest"]);
        let Ok(Command::Test(o)) = parse_words("test --jobs 3 -- sigtests") else {
            panic!("did not parse")
        };
        assert_eq!((o.jobs, o.program), (Some(3), vec!["sigtests".to_string()]));
    }

    #[test]
    fn disks_come_in_order_and_at_most_four() {
        // Cargo.toml is a file every checkout has (tests run in xtask/).
        let Ok(Command::Run(o)) = parse_words("run --disk Cargo.toml --disk src/main.rs") else {
            panic!("did not parse")
        };
        assert_eq!(
            o.disks,
            [
                std::path::PathBuf::from("Cargo.toml"),
                std::path::PathBuf::from("src/main.rs")
            ]
        );
        let five = String::from("run") + &" --disk Cargo.toml".repeat(5);
        assert_eq!(
            parse_words(&five),
            Err("--disk is given at most 4 times: the kernel drives /dev/vda to /dev/vdd".into())
        );
        assert!(parse_words("run --disk no/such.img").is_err());
    }

    #[test]
    fn prof_takes_the_program_with_or_without_dashes() {
        let Ok(Command::Prof(o)) = parse_words("prof --graph g.svg /bin/callgraph x") else {
            panic!()
        };
        assert_eq!(o.program, ["/bin/callgraph", "x"]);
        assert_eq!(o.graph.as_deref(), Some(std::path::Path::new("g.svg")));
        let Ok(Command::Prof(o)) = parse_words("prof -- /bin/callgraph") else {
            panic!()
        };
        assert_eq!(o.program, ["/bin/callgraph"]);
        assert_eq!(
            parse_words("run --graph g.svg"),
            Err("--graph only goes with prof and kprof".into())
        );
        assert_eq!(
            parse_words("test --fresh"),
            Err("--fresh only goes with run and gdb".into())
        );
        assert!(matches!(parse_words("gdb --fresh"), Ok(Command::Gdb(o)) if o.fresh));
        assert!(
            matches!(parse_words("kprof -- /bin/ls /"), Ok(Command::Kprof(o)) if o.program == ["/bin/ls", "/"] && o.kprof)
        );
        assert_eq!(
            parse_words("image /bin/ls"),
            Err("unknown option '/bin/ls'; try `cargo xtask help`".into())
        );
    }

    #[test]
    fn mistakes_are_one_line_messages() {
        for (line, want) in [
            ("", "no command given; try `cargo xtask help`"),
            (
                "frobnicate",
                "unknown command 'frobnicate'; try `cargo xtask help`",
            ),
            (
                "run --bogus",
                "unknown option '--bogus'; try `cargo xtask help`",
            ),
            ("run --hz", "--hz needs a value"),
            (
                "run --hz 50",
                "--hz must be a number from 100 to 10000, not '50'",
            ),
            (
                "run --hz fast",
                "--hz must be a number from 100 to 10000, not 'fast'",
            ),
            ("run --accel hvf", "--accel must be tcg or kvm, not 'hvf'"),
            (
                "run --cpus 0",
                "--cpus must be a number from 1 to 16, not '0'",
            ),
            (
                "run --cpus 17",
                "--cpus must be a number from 1 to 16, not '17'",
            ),
            (
                "run --cpus two",
                "--cpus must be a number from 1 to 16, not 'two'",
            ),
            ("run --boot lock", "--boot needs KEY=VALUE, not 'lock'"),
            (
                "run --boot slice=3",
                "--boot slice=3: unknown key 'slice'; the kernel knows hz (--hz), tick (--tick), mode, init, init_arg (-- PROGRAM ARGS), root, crash, export (--export), lock, hold_panic, loglevel, quiet, slice_ms, profhz, randomize_va_space",
            ),
            (
                "run --boot lock=fair",
                "--boot lock=fair: lock must be auto, ticket or tas",
            ),
            (
                "run --boot hz=250",
                "--boot hz=250: hz has a flag of its own: --hz",
            ),
            (
                "run --tick tsc",
                "--tick must be pit, apic or hpet, not 'tsc'",
            ),
            (
                "run --timeout 0",
                "--timeout must be a positive number of seconds, not '0'",
            ),
            ("run --", "-- must be followed by a program to run"),
            ("image -- /bin/ls", "'image' takes no program after --"),
            (
                "bench --kprof",
                "--kprof only goes with run, gdb, test, image and kprof",
            ),
            ("prof --user", "--user and --kernel only go with kprof"),
            ("fuzz --minutes x", "--minutes needs a number, not 'x'"),
            ("fuzz --workers 99", "--workers 99 is out of range"),
            ("test --quick", "--quick only goes with bench"),
            ("run --jobs 2", "--jobs only goes with test"),
            (
                "test --jobs 0",
                "--jobs must be a number of suites from 1 to 64, not '0'",
            ),
            (
                "test --jobs many",
                "--jobs must be a number of suites from 1 to 64, not 'many'",
            ),
            (
                "run --seed 3",
                "--minutes, --seed and --workers only go with fuzz",
            ),
            (
                "run --add x:relative",
                "--add needs HOST[:/GUEST/PATH], not 'x:relative'",
            ),
            (
                "run --export gmon.out",
                "--export needs an absolute guest path without commas, not 'gmon.out'",
            ),
        ] {
            let err = parse_words(line).unwrap_err();
            assert_eq!(err, want);
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn pytests_takes_module_names_or_all() {
        assert_eq!(
            parse_words("pytests"),
            Ok(Command::Pytests(Options::default(), vec![]))
        );
        let Ok(Command::Pytests(o, m)) = parse_words("pytests --timeout 99 -- test_os test_pty")
        else {
            panic!("pytests with modules");
        };
        assert_eq!(
            (o.timeout, m),
            (Some(99), vec!["test_os".into(), "test_pty".into()])
        );
        assert!(
            matches!(parse_words("pytests -- all"), Ok(Command::Pytests(_, m)) if m == ["all"])
        );
        for bad in [
            "pytests -- os",
            "pytests -- test_os;rm",
            "pytests -- all test_os",
        ] {
            let err = parse_words(bad).unwrap_err();
            assert!(err.starts_with("pytests: "), "{bad}: {err}");
        }
    }
}
